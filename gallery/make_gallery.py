"""Render every scene headless into this folder: a still (PNG) and a short animation (GIF) per scene, and the
stills of ``STILLS`` (a scene drawn another way: the hexapod's URDF visuals with its collision shapes as
wireframes).

    python gallery/make_gallery.py            # all scenes
    python gallery/make_gallery.py soil_ruts  # some of them

Each scene runs in its own process (GGUI allows one window per process). Files over 2 MB are reported.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENES = HERE.parent / "scenes"
LIMIT = 2 * 1024 * 1024

#: scene -> extra command-line arguments for its gallery run
RUNS = {
    "soil_ruts": ["--seconds", "6", "--fps", "12", "--width", "560", "--height", "315"],
    "slope_and_wall": ["--seconds", "5", "--fps", "12", "--width", "560", "--height", "315"],
    "many_worlds": ["--seconds", "3", "--fps", "12", "--width", "560", "--height", "420"],
    "cradle_and_pile": ["--seconds", "3", "--fps", "12", "--width", "560", "--height", "315"],
    "push_boxes": ["--seconds", "12.5", "--fps", "10", "--width", "560", "--height", "420"],
    "robot_crowd": ["--seconds", "12", "--fps", "10", "--width", "560", "--height", "420"],
    "quadruped_terrain": ["--seconds", "7", "--fps", "12", "--width", "560", "--height", "315"],
    "tracked_robot_steps": ["--seconds", "6", "--fps", "12", "--width", "560", "--height", "315"],
    "conveyor": ["--seconds", "5", "--fps", "15", "--width", "560", "--height", "315"],
    "rotating_intruder": ["--envs", "1", "--seconds", "3.6", "--fps", "12", "--width", "560", "--height", "315"],
    "hexapod_sand": ["--seconds", "4", "--fps", "12", "--width", "560", "--height", "315"],
    "buggy_soil": ["--seconds", "15", "--fps", "12", "--width", "560", "--height", "315"],
    "randomized_terrain": ["--seconds", "4", "--fps", "12", "--width", "560", "--height", "420"],
}
#: stills only: name -> (scene, extra command-line arguments)
STILLS = {
    "hexapod_sand_both": ("hexapod_sand", ["--seconds", "2", "--width", "560", "--height", "315", "--show", "both"]),
}


def main(names) -> int:
    too_big = []
    for name in names or [*RUNS, *STILLS]:
        if name not in RUNS and name not in STILLS:
            print(f"unknown scene {name!r}; choose from {sorted([*RUNS, *STILLS])}")
            return 2
        gif, png = HERE / f"{name}.gif", HERE / f"{name}.png"
        t0 = time.perf_counter()
        if name in RUNS:
            subprocess.run([sys.executable, str(SCENES / f"{name}.py"), "--headless", "--quiet", "--record",
                            str(gif), "--still", str(png), *RUNS[name]], check=True)
        else:
            scene, extra = STILLS[name]
            subprocess.run([sys.executable, str(SCENES / f"{scene}.py"), "--headless", "--quiet", "--still", str(png),
                            *extra], check=True)
        sizes = {p.name: p.stat().st_size for p in (gif, png) if p.exists() and (name in RUNS or p == png)}
        print(f"{name}: {', '.join(f'{k} {v / 1024:.0f} KiB' for k, v in sizes.items())} "
              f"({time.perf_counter() - t0:.1f} s)")
        too_big += [k for k, v in sizes.items() if v > LIMIT]
    if too_big:
        print(f"over 2 MB: {too_big}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
