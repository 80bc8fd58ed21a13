"""Step kernels loaded through their stand-ins (``taichi_terra/kernel_cache.py``): a later process gets the same
code without Taichi's front end, steps a world to the same bits, and a stand-in that loaded its own empty code is
caught before it stepped anything."""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import taichi as ti
from taichi._lib import core

import taichi_terra as tt
from taichi_terra import kernel_cache

ROOT = Path(__file__).resolve().parents[1]

#: a ball dropped on a box and the ground: 200 steps of contacts and friction, then a hash of the state; the
#: loads of the process's step kernels; ``DROP`` in argv: the stand-in's cache file deleted before it is
#: compiled (as where Taichi's cache dropped it), so Taichi compiles the stand-in's own empty body
SCRIPT = textwrap.dedent("""
    import hashlib, sys
    import numpy as np
    import taichi_terra as tt
    from taichi_terra import kernel_cache
    tt.init(verbose=False)
    if "DROP" in sys.argv:
        def drop(entry):
            kernel_cache._cache_file(entry["stand_in"]).unlink(missing_ok=True)
            return True
        kernel_cache._copy_code = drop
    world = tt.World(dt=2e-3)
    world.add_ground()
    box = world.add_box(0.3, 0.3, 0.1, 2.0)
    box.set_position([0.0, 0.0, 0.05])
    ball = world.add_sphere(0.1, 1.0)
    ball.set_position([0.05, 0.02, 0.6])
    ball.set_linear_velocity([0.3, 0.0, 0.0])
    ball.set_angular_velocity([0.0, 2.0, 0.0])
    world.step(200)
    cp = world.checkpoint()
    h = hashlib.sha256(b"".join(np.ascontiguousarray(cp.arrays[k]).tobytes() for k in sorted(cp.arrays)))
    print("STATE", h.hexdigest(), float(ball.get_position(0)[2]))
    print("LOADED", ",".join(sorted(set(kernel_cache._loaded.values()))))
""")


def _run(*flags, front_cache=True):
    env = dict(os.environ, TAICHI_TERRA_FRONT_CACHE="1" if front_cache else "0")
    out = subprocess.run([sys.executable, "-c", SCRIPT, *flags], capture_output=True, text=True, timeout=600,
                         cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    found = dict(line.split(" ", 1) for line in out.stdout.splitlines() if line.startswith(("STATE", "LOADED")))
    return found["STATE"], found["LOADED"]


def test_a_later_process_loads_the_step_kernel_through_its_stand_in_and_steps_the_same_bits():
    """Reference: the same script with the module off (Taichi's front end builds the kernel). The first process
    with it on notes the keys (where no earlier run did), the next loads the stand-in's entry, and every one
    ends in the same state, bit for bit. The reference stepped: the ball fell from 0.6 m onto the box (its top
    at 0.1 m, the ball's radius 0.1 m: the centre within 5 mm of 0.2 m, 0.1 s after it landed)."""
    reference, loaded = _run(front_cache=False)
    assert loaded == "kernel"
    assert abs(float(reference.split()[1]) - 0.2) < 0.005
    assert _run()[0] == reference
    state, loaded = _run()
    assert (state, loaded) == (reference, "stand-in")


def test_a_stand_in_that_loaded_its_own_empty_code_is_caught_and_the_kernel_compiled():
    """The stand-in's cache file gone: Taichi compiles the stand-in's empty body; its first launch writes no
    stamp, so the kernel is compiled in full before any step, and the world steps to the reference's bits."""
    reference, _ = _run(front_cache=False)
    state, loaded = _run("DROP")
    assert (state, loaded) == (reference, "kernel")


def test_the_key_follows_the_variant_and_taichis_settings_and_the_tag_holds_248_bits(monkeypatch):
    """A process with other Taichi settings (fewer threads: Taichi's key of every kernel differs) notes its
    kernels under keys of its own."""
    tt.init()
    a, b = kernel_cache.key("step", (True, False)), kernel_cache.key("step", (False, False))
    assert a != b and a == kernel_cache.key("step", (True, False)) and a != kernel_cache.key("other", (True, False))
    assert "cpu_max_num_threads=" in kernel_cache._taichi_settings()
    settings = kernel_cache._taichi_settings()
    monkeypatch.setattr(kernel_cache, "_taichi_settings", lambda: settings.replace("cpu_max_num_threads=", "x="))
    assert kernel_cache.key("step", (True, False)) != a
    monkeypatch.undo()
    t = kernel_cache.tag(a)
    assert len(t) == 8 and all(0 <= x < 2 ** 31 for x in t)
    assert t != kernel_cache.tag(b)


def test_the_fingerprint_follows_the_kernels_source(tmp_path, monkeypatch):
    """A copy of the sources hashes as the package does; an edit of one kernel file changes the hash."""
    for name in kernel_cache._SOURCES:
        src = kernel_cache._PACKAGE / name
        if src.is_dir():
            shutil.copytree(src, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, tmp_path / name)
    before = kernel_cache.fingerprint("cpu", "f64")
    monkeypatch.setattr(kernel_cache, "_PACKAGE", tmp_path)
    monkeypatch.setattr(kernel_cache, "_fingerprints", {})
    assert kernel_cache.fingerprint("cpu", "f64") == before
    assert kernel_cache.fingerprint("cpu", "f32") != before
    path = tmp_path / "kernels" / "step.py"
    path.write_text(path.read_text() + "\n# an edit\n")
    monkeypatch.setattr(kernel_cache, "_fingerprints", {})
    assert kernel_cache.fingerprint("cpu", "f64") != before


def test_reading_taichis_key_keeps_the_log_level_and_what_else_went_to_stderr(capfd):
    """The key comes from Taichi's debug log, read from stderr; the log level is restored after, and anything
    else written to stderr meanwhile still reaches it."""
    tt.init()

    @ti.kernel
    def double(x: ti.types.ndarray(ndim=1)):
        for i in range(x.shape[0]):
            x[i] *= 2.0

    x = ti.ndarray(ti.f64, 3)
    x.fill(1.5)

    def call():
        sys.stderr.write("a line of its own\n")
        double(x)

    was_debug = core.logging_effective("debug")
    got = kernel_cache._taichi_key(call)
    assert got is not None and len(got) == 65 and got[0] == "T"
    assert kernel_cache._taichi_key(lambda: double(x)) == got  # (the same kernel: the same key, from memory)
    assert core.logging_effective("debug") == was_debug
    err = capfd.readouterr().err
    assert "a line of its own" in err and "[D " not in err
    assert (x.to_numpy() == 6.0).all()  # (both calls ran)


def test_the_module_is_off_where_the_environment_says_so(monkeypatch):
    monkeypatch.setenv("TAICHI_TERRA_FRONT_CACHE", "0")
    assert not kernel_cache.enabled()
    monkeypatch.delenv("TAICHI_TERRA_FRONT_CACHE")
    assert kernel_cache.enabled()
