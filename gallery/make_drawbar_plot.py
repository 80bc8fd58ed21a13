"""Drawbar pull against slip of a driven rigid wheel on the vehicle soil bed: the simulation beside the Janosi
integral over the contact, drawn with pillow into ``gallery/drawbar_pull.png`` (data in ``drawbar_pull.json``).

    python gallery/make_drawbar_plot.py

The rig and the closed form are those of ``tests/test_soil_wheel.py`` (a 224 kg wheel of radius 0.3611 m and
width 0.1562 m at 0.2 m/s on 1 cm samples, one env per slip); the curve is the closed form at the sinkage the
simulation measured, interpolated between the slips run.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent
SLIPS = np.round(np.linspace(0.0, 0.5, 11), 3)


def _rig():
    spec = importlib.util.spec_from_file_location("soil_wheel", HERE.parent / "tests" / "test_soil_wheel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plot(rows: list[dict], path: Path, size=(640, 420)) -> None:
    """Pull [kN] against slip: simulated points, closed-form curve, axes with ticks."""
    w, h = size
    left, right, top, bottom = 70, 20, 40, 55
    image = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(image)
    slips = np.array([r["slip"] for r in rows])
    pulls = np.array([r["pull"] for r in rows]) / 1e3
    curve_s, curve_p = np.array(rows[0]["curve_slip"]), np.array(rows[0]["curve_pull"]) / 1e3
    lo, hi = min(pulls.min(), curve_p.min()), max(pulls.max(), curve_p.max())
    lo, hi = np.floor(lo * 2) / 2, np.ceil(hi * 2) / 2

    def xy(s, p):
        return (left + (w - left - right) * s / 0.5, top + (h - top - bottom) * (hi - p) / (hi - lo))

    d.rectangle([left, top, w - right, h - bottom], outline="black")
    for s in np.arange(0.0, 0.51, 0.1):
        x, y = xy(s, lo)
        d.line([x, y, x, y + 5], fill="black")
        d.text((x - 9, y + 8), f"{s:.1f}", fill="black")
    for p in np.arange(lo, hi + 1e-9, 0.5):
        x, y = xy(0.0, p)
        d.line([x - 5, y, x, y], fill="black")
        d.line([x, y, w - right, y], fill=(225, 225, 225))
        d.text((x - 38, y - 6), f"{p:+.1f}", fill="black")
    d.line([*xy(0.0, 0.0), *xy(0.5, 0.0)], fill=(150, 150, 150))
    d.line([tuple(xy(s, p)) for s, p in zip(curve_s, curve_p)], fill=(40, 90, 200), width=2)
    for s, p in zip(slips, pulls):
        x, y = xy(s, p)
        d.ellipse([x - 4, y - 4, x + 4, y + 4], fill=(220, 80, 30))
    d.text((left, 12), "Drawbar pull of a driven rigid wheel on soil (R 0.361 m, 224 kg, 1 cm samples)", fill="black")
    d.text(((w - left) // 2, h - 22), "slip  1 - v / (omega R)", fill="black")
    d.text((8, top - 16), "pull [kN]", fill="black")
    base = h - bottom - 50  # (the legend in the empty lower right)
    d.ellipse([w - 205, base + 12, w - 197, base + 20], fill=(220, 80, 30))
    d.text((w - 190, base + 9), "simulated", fill="black")
    d.line([w - 208, base + 34, w - 194, base + 34], fill=(40, 90, 200), width=2)
    d.text((w - 190, base + 28), "Janosi integral", fill="black")
    image.save(path)


def main() -> int:
    if "--replot" in sys.argv:  # (from the saved data)
        plot(json.loads((HERE / "drawbar_pull.json").read_text()), HERE / "drawbar_pull.png")
        return 0
    import taichi_terra as tt

    tt.init(arch="cpu")
    rig = _rig()
    pull, vertical, sinkage, slip = rig.drawbar_run(list(SLIPS))
    fine = np.linspace(0.0, 0.5, 201)
    curve = [rig.drawbar_closed_form(s, float(np.interp(s, slip, sinkage)), 0.2)[0] for s in fine]
    rows = []
    for i, s in enumerate(slip):
        expected = rig.drawbar_closed_form(s, sinkage[i], 0.2)[0]
        rows.append({"slip": float(s), "pull": float(pull[i]), "closed_form": float(expected),
                     "vertical": float(vertical[i]), "sinkage": float(sinkage[i])})
        print(f"slip {s:.3f}: pull {pull[i]:8.1f} N, Janosi integral {expected:8.1f} N, "
              f"difference {100 * (pull[i] - expected) / (224.0 * rig.G):+.2f} % of the weight, sinkage "
              f"{1e3 * sinkage[i]:.2f} mm")
    rows[0]["curve_slip"], rows[0]["curve_pull"] = fine.tolist(), curve
    (HERE / "drawbar_pull.json").write_text(json.dumps(rows, indent=1))
    plot(rows, HERE / "drawbar_pull.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
