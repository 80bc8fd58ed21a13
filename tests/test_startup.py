"""What a user meets first: the compile notice of a first step (and ``verbose=False`` / ``--quiet`` that silence
it), the system software the scenes and tests install or name, and Taichi's front end with taichi_terra's
source cache still pointing errors at the right line."""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import taichi as ti

import taichi_terra as tt
from taichi_terra import system, world as world_module
from taichi_terra.viewer import app
from helpers import specializing

ROOT = Path(__file__).resolve().parents[1]

FIRST_STEPS = textwrap.dedent("""
    import taichi_terra as tt
    tt.init()
    world = tt.World(dt=1e-3)
    world.add_sphere(0.1, 1.0).set_position([0.0, 0.0, 0.5])
    world.step()                       # the first world of its kind: compiles, says so
    again = tt.World(dt=1e-3)
    again.add_sphere(0.1, 1.0)
    again.step()                       # the same kind in the same process: nothing to compile, nothing said
""")


def test_a_first_step_that_compiles_says_so():
    """A new process: the first step of the first world of a kind names the kernel it compiles and the cache,
    then the time it took; a second world of that kind says nothing (``verbose=False`` and ``--quiet``: the
    scene test below)."""
    out = subprocess.run([sys.executable, "-c", FIRST_STEPS], capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [line for line in out.stderr.splitlines() if line.startswith("taichi_terra:")]
    assert len(lines) == 2, out.stderr
    assert "compiling the step kernel (free bodies, one env, serial; cpu f64)" in lines[0]
    assert "Taichi's cache" in lines[0]
    assert lines[1].startswith("taichi_terra: compiled in ") and lines[1].endswith(" s")


def _tiny_scene(args):
    world = tt.World(dt=1e-3)
    world.add_sphere(0.1, 1.0).set_position([0.0, 0.0, 0.3])
    return app.Scene(world)


@pytest.mark.needs("vulkan")
@pytest.mark.parametrize("flags,said", [([], True), (["--quiet"], False)])
def test_a_scene_says_when_it_compiles_unless_quiet(flags, said, capsys, monkeypatch):
    """The scene's step kernel counts as new here (this process may have compiled it already, which would say
    nothing): the notice is printed before the first frame, and ``--quiet`` leaves it out with the report. The
    report gives the compile apart from the physics."""
    monkeypatch.setattr(world_module, "_COMPILED_VARIANTS", set())
    try:
        timing = app.main(_tiny_scene, "tiny", "a scene", ["--headless", "--seconds", "0.1", "--fps", "10",
                                                             "--width", "32", "--height", "24", *flags])
    finally:
        tt.init(verbose=True)  # (the scene set it from --quiet; later tests in this process expect the default)
    err = capsys.readouterr().err
    assert ("taichi_terra: compiling the step kernel" in err) == said
    assert timing["compile_s"] > 0.0 and timing["physics_s"] >= 0.0 and timing["steps"] == 100


def test_init_rejects_a_non_bool_verbose():
    with pytest.raises(TypeError, match="verbose must be a bool"):
        tt.init(verbose="no")


def test_init_rejects_a_non_bool_specialize_and_keeps_the_setting():
    """``specialize`` is a bool, or None to keep the current setting (the suite's: off)."""
    from taichi_terra import backend

    cfg = backend.config()
    for bad in ("yes", 1):
        with pytest.raises(TypeError, match="specialize must be a bool or None"):
            tt.init(cfg["arch"], cfg["precision"], cfg["threads"], specialize=bad)
    assert backend.step_features(1, 1, 0, 0) == backend.step_features(0, 0, 0, 0)  # (off: every part)
    tt.init(cfg["arch"], cfg["precision"], cfg["threads"])
    assert backend.step_features(1, 0, 0, 0) == backend.step_features(0, 0, 1, 1)  # (None kept it off)


def test_missing_system_software_names_the_command(monkeypatch):
    """Where the driver is missing and this process may not install it, the message is one line that names
    the command; nothing is installed, nothing is started."""
    monkeypatch.setattr(system, "available", lambda name: False)
    monkeypatch.setattr(system, "can_install", lambda: False)
    monkeypatch.delenv("VK_ICD_FILENAMES", raising=False)
    monkeypatch.delenv("VK_DRIVER_FILES", raising=False)
    with pytest.raises(system.MissingSystemSoftware) as info:
        system.require(["vulkan", "ffmpeg"], quiet=True)
    message = str(info.value)
    assert "\n" not in message
    assert "apt-get install -y mesa-vulkan-drivers libvulkan1" in message
    assert "apt-get install -y ffmpeg" in message
    assert system.install_command(["xvfb"]) == "apt-get update && apt-get install -y xvfb xauth"
    with pytest.raises(ValueError, match="names must be among"):
        system.missing(["opengl"])


def test_a_scene_without_a_driver_stops_at_once_with_one_line(monkeypatch):
    """The scene's command line: no Vulkan driver and no way to install one exits before Taichi starts, with
    the scene's name and the command to run."""
    monkeypatch.setattr(system, "available", lambda name: False)
    monkeypatch.setattr(system, "can_install", lambda: False)
    monkeypatch.delenv("VK_ICD_FILENAMES", raising=False)
    monkeypatch.delenv("VK_DRIVER_FILES", raising=False)
    built = []
    with pytest.raises(SystemExit) as info:
        app.main(lambda args: built.append(args), "tiny", "a scene", ["--headless", "--seconds", "0.1"])
    assert str(info.value).startswith("tiny: a Vulkan driver")
    assert "apt-get install -y mesa-vulkan-drivers libvulkan1" in str(info.value)
    assert built == []


def test_a_hidden_driver_is_reported_as_hidden_and_not_installed(monkeypatch):
    """``VK_ICD_FILENAMES`` naming no existing file hides an installed driver from the Vulkan loader: the
    reason says so, and :func:`system.provide` installs nothing for it."""
    monkeypatch.setenv("VK_ICD_FILENAMES", "/nonexistent/icd.json")
    monkeypatch.delenv("VK_DRIVER_FILES", raising=False)
    calls = []
    monkeypatch.setattr(system.subprocess, "run", lambda *a, **k: calls.append(a))
    assert not system.available("vulkan")
    assert "hidden" in system.why_missing("vulkan")
    assert system.provide(["vulkan"], quiet=True) == ["vulkan"]
    assert calls == []


@ti.func
def _reads_an_unknown_name(x):
    return x + not_defined_anywhere  # noqa: F821  (the error under test)


@ti.kernel
def _broken(a: ti.types.ndarray()):
    a[0] = _reads_an_unknown_name(a[0])


def test_front_end_errors_still_name_the_file_and_line():
    """taichi_terra shortens Taichi's source positions and reads each function's source once
    (taichi_terra/frontend.py): an error in a ``ti.func`` still names this file, the line and the code."""
    a = ti.ndarray(ti.f64, 1)
    with pytest.raises(Exception) as info:
        _broken(a)
    text = str(info.value)
    assert "not_defined_anywhere" in text
    assert "test_startup.py" in text
    assert np.isfinite(a.to_numpy()).all()


@ti.kernel
def _matrix_ops(a: ti.types.ndarray(), b: ti.types.ndarray(), v: ti.types.ndarray(), out: ti.types.ndarray()):
    A = ti.Matrix([[a[i, j] for j in ti.static(range(3))] for i in ti.static(range(3))])
    B = ti.Matrix([[b[i, j] for j in ti.static(range(2))] for i in ti.static(range(3))])
    x = ti.Vector([v[0], v[1], v[2]])
    y, z, C, T, o = A @ x, x @ A, A @ B, B.transpose(), x.outer_product(A @ x)
    w = x.cross(y)
    I, Z = ti.Matrix.identity(ti.f64, 3), ti.Matrix.zero(ti.f64, 3, 2) + ti.Vector.zero(ti.f64, 3).sum()
    for i in ti.static(range(3)):
        out[i], out[3 + i], out[6 + i] = y[i], z[i], w[i]
        for j in ti.static(range(2)):
            out[9 + 2 * i + j], out[15 + 2 * i + j] = C[i, j], T[j, i] + Z[i, j]
        for j in ti.static(range(3)):
            out[21 + 3 * i + j] = o[i, j] + (I @ A)[i, j] - A[i, j]
    out[30], out[31], out[32], out[33] = x.dot(y), x.norm(), x.norm_sqr(), A.sum()
    out[34], out[35], out[36] = ti.math.length(x), ti.math.cross(x, y).dot(x), (A @ B).sum()


def test_small_matrix_operations_built_from_python_match_numpy():
    """``frontend`` builds ``@``, ``dot``, ``cross``, ``norm``, ``sum``, ``transpose``, ``outer_product`` and the zero
    and identity matrices as expressions from Python instead of Taichi's functions. Reference: numpy on the same
    numbers, to the rounding of a few f64 operations; shapes that do not match still fail to compile."""
    from taichi.lang.exception import TaichiCompilationError

    rng = np.random.default_rng(7)
    a, b, v = rng.normal(size=(3, 3)), rng.normal(size=(3, 2)), rng.normal(size=3)
    out = np.zeros(37)
    _matrix_ops(a, b, v, out)
    y = a @ v
    want = np.concatenate([y, v @ a, np.cross(v, y), (a @ b).ravel(), b.ravel(), np.outer(v, y).ravel(),
                           [v @ y, np.linalg.norm(v), v @ v, a.sum(), np.linalg.norm(v), 0.0, (a @ b).sum()]])
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-14)

    @ti.kernel
    def mismatched(a: ti.types.ndarray(), out: ti.types.ndarray()):
        A = ti.Matrix([[a[i, j] for j in ti.static(range(3))] for i in ti.static(range(3))])
        out[0] = (A @ ti.Vector([1.0, 2.0]))[0]

    with pytest.raises(TaichiCompilationError):
        mismatched(a, out)


#: a kernel that builds subscripts of an ndarray and of local vectors and matrices (constant and computed indices,
#: through a ti.func), integer, float and unsigned 64-bit literals, and Expr copies; run with or without
#: taichi_terra's direct front-end paths, it prints its result and Taichi's cache keys (which hash its IR)
DIRECT_PATHS = textwrap.dedent("""
    import pathlib, sys
    import taichi as ti
    ti.init(arch=ti.cpu, default_fp=ti.f64, fast_math=False, offline_cache=True, log_level=ti.WARN)
    if sys.argv[1] == "direct":
        from taichi_terra import frontend
        frontend._direct_subscripts()
        frontend._direct_expressions()
        frontend._direct_dispatch()

    @ti.func
    def pick(m, i):
        return m[i, 1] + m[1, i] * 2.5

    @ti.kernel
    def k(a: ti.types.ndarray(), b: ti.types.ndarray(), n: ti.i32) -> ti.f64:
        m = ti.Matrix([[a[i, j] for j in ti.static(range(3))] for i in ti.static(range(3))])
        v = ti.Vector([1.0, -2.0, 3])
        s = 0.0
        for i in range(n):
            s += pick(m, i % 3) * v[i % 3] + b[i] - 7 + ti.cast(ti.u64(18446744073709551615) >> ti.u64(62), ti.f64)
            b[i] = s * 0.5
        return s

    import numpy as np
    a = np.arange(9.0).reshape(3, 3)
    b = np.linspace(0.0, 1.0, 7)
    print(repr(k(a, b, 7)), repr(b.tolist()))
    ti.reset()
    print(sorted(p.name for p in pathlib.Path(sys.argv[2]).glob("*.tic")))
""")


def test_direct_front_end_paths_build_the_same_ir(tmp_path):
    """``frontend`` builds subscripts, literals and ``Expr`` copies and dispatches AST nodes by a shorter path
    than Taichi's (40 % of the front end's time). Reference: Taichi's own front end. A kernel built each way must
    give the same cache keys (Taichi hashes the kernel's IR into them) and the same numbers."""
    script = tmp_path / "direct_paths.py"  # (Taichi reads a kernel's source from its file)
    script.write_text(DIRECT_PATHS)
    outs = {}
    for mode in ("taichi", "direct"):
        cache = tmp_path / mode
        out = subprocess.run([sys.executable, str(script), mode, str(cache)], capture_output=True, text=True,
                             timeout=300, cwd=ROOT, env={**os.environ, "TI_OFFLINE_CACHE_FILE_PATH": str(cache),
                                                         "PYTHONPATH": str(ROOT)})
        assert out.returncode == 0, out.stderr[-3000:]
        outs[mode] = out.stdout.strip().splitlines()[-2:]
    assert outs["direct"] == outs["taichi"]
    assert outs["taichi"][1] != "[]"  # (the kernel's entry was written)


def test_the_direct_paths_leave_errors_to_taichi():
    """What the direct paths do not build goes to Taichi's own functions, which still report it: a negative
    constant index of an ndarray, an integer literal beyond 32 bits."""
    from taichi.lang.exception import TaichiCompilationError

    @ti.kernel
    def negative(a: ti.types.ndarray()):
        a[-1] = 1.0

    @ti.kernel
    def too_big(a: ti.types.ndarray()):
        a[0] = 4294967296 * 2

    for kernel, match in ((negative, "Negative indices"), (too_big, "exceeded the range")):
        with pytest.raises(TaichiCompilationError, match=match):
            kernel(np.zeros(2))


def test_which_worlds_share_a_step_kernel():
    """The step kernel counts a world's plate carriers at run time (``kernels/step.py``): free-body worlds with
    and without RFT plates share one kernel, and so do articulated worlds where ``specialize`` is off (as in this
    suite). Where it is on, an articulated world's kernel has only the optional parts it uses
    (``backend.step_features``), so plates make another; the tree stages make another either way."""
    from taichi_terra.bodies.urdf import make_chain_urdf
    from taichi_terra.kernels.common.arrays import FEATURES

    variants = {}
    for specialize in (False, True):
        with specializing(specialize):
            for trees in (False, True):
                for plates in (False, True):
                    world = tt.World(dt=1e-3)
                    if trees:
                        owner, link = world.add_articulated_system(make_chain_urdf(1), base="fixed"), "link1"
                    else:
                        owner, link = world.add_sphere(0.1, 1.0), None
                    if plates:
                        world.add_granular_medium(0.0)
                        world.add_plates(owner, link, count=4)
                    world.build()
                    variants[specialize, trees, plates] = world._step_variant()
    for specialize in (False, True):
        assert variants[specialize, False, False] == variants[specialize, False, True]
        assert variants[specialize, False, False] != variants[specialize, True, False]
        assert variants[specialize, False, False][-1] == FEATURES
    assert variants[False, True, False] == variants[False, True, True]
    assert variants[False, True, False][-1] == FEATURES
    assert variants[True, True, False][-1] == ()
    assert variants[True, True, True][-1] == ("rft",)


def test_precompile_marks_what_it_compiled_and_rejects_unknown_variants(tmp_path, monkeypatch):
    """``taichi_terra.precompile`` keys its markers by the kernels' source, Taichi's version, the backend and
    the precision; a pair with a marker is not compiled again (the suite's own start compiles for real)."""
    from taichi_terra import precompile

    monkeypatch.setenv("TI_OFFLINE_CACHE_FILE_PATH", str(tmp_path))
    assert precompile.cache_path() == tmp_path
    assert precompile.fingerprint("cpu", "f64") != precompile.fingerprint("cpu", "f32")
    assert precompile.missing(["free-serial"], ("f64", "f32")) == [("f64", "free-serial"), ("f32", "free-serial")]
    marker = precompile._marker("cpu", "f32", "free-serial")
    marker.parent.mkdir(parents=True)
    marker.write_text("{}")
    assert precompile.missing(["free-serial"], ("f64", "f32")) == [("f64", "free-serial")]
    assert precompile.precompile(["free-serial"], ("f32",)) == []  # (marked: nothing to do, no process started)
    with pytest.raises(ValueError, match="variants must be among"):
        precompile.missing(["trees-fast"])
    with pytest.raises(ValueError, match="precisions must be"):
        precompile.missing(["free-serial"], ("f16",))
    assert set(precompile.VARIANTS) == {f"{kind}-{loop}" for kind in ("free", "trees") for loop in ("serial", "parallel")}
    for bad, match in (("trees-serial+mud", "parts must be among"), ("free-serial+soil", "only the trees variants"),
                       ("trees+soil", "variants must be among")):
        with pytest.raises(ValueError, match=match):
            precompile.missing([bad])
    assert precompile.missing(["trees-serial+soil+pins"]) == [("f64", "trees-serial+soil+pins")]


@pytest.mark.parametrize("variant, parts", [("trees-serial+", ()), ("trees-serial+soil+pins", ("soil", "pins")),
                                            ("trees-parallel+rft+belts", ("belts", "rft")), ("trees-serial", None)])
def test_precompile_builds_a_world_with_just_the_parts_asked_for(variant, parts):
    """``precompile --parts`` compiles the kernel a world with just those parts compiles: its world's step
    kernel variant has those parts where ``specialize`` is on (and every part, the shared kernel, without
    ``+parts``, as the precompile worker compiles it with ``specialize`` off). No kernel is compiled here."""
    from taichi_terra import precompile
    from taichi_terra.kernels.common.arrays import FEATURES

    with specializing(parts is not None):
        world = precompile._world(variant)
        world.build()
        assert world._step_variant()[-1] == (FEATURES if parts is None else parts)
        assert world._step_variant()[0] == variant.startswith("trees-serial")


@ti.func
def _sum_of_row(a: ti.template(), e, n):
    total = 0.0
    for k in range(n):
        total += a[e, k]
    return total


@ti.real_func
def _row_sum_as_a_function(a: ti.types.ndarray(), e: ti.i32, n: ti.i32) -> ti.f64:
    return _sum_of_row(a, e, n)


@ti.kernel
def _row_sums(a: ti.types.ndarray(), out: ti.types.ndarray()):
    for e in range(a.shape[0]):
        out[e] = _row_sum_as_a_function(a, e, a.shape[1])


def test_a_function_inlined_into_a_real_function_runs_its_loop():
    """Taichi 1.7 builds the statements of a ``ti.func`` inlined into a ``ti.real_func`` into the kernel instead
    (measured without taichi_terra's fix: the loop's first term alone); the step kernel's stages are real
    functions made of such calls. Reference: the sums numpy takes."""
    from taichi_terra import frontend

    assert frontend.real_functions_work()
    a = np.arange(12.0).reshape(3, 4) ** 2
    out = np.zeros(3)
    _row_sums(a, out)
    assert out.tolist() == a.sum(axis=1).tolist()


def test_a_precompile_worker_writes_the_cache_before_its_process_ends(tmp_path):
    """A precompile worker writes what it compiled to Taichi's cache while it holds the exit lock, before its
    interpreter shuts down (left to the shutdown, the write could come after the lock's file was closed, and
    of two workers writing at once one lost its kernels): when ``_worker`` returns, the entries are there."""
    script = ("import os, sys\nfrom taichi_terra import precompile\nprecompile._worker('cpu', 'f64', ['free-serial'])\n"
              "print(len([f for f in os.listdir(sys.argv[1]) if f.endswith('.tic')]))\n")
    cache = tmp_path / "cache"
    out = subprocess.run([sys.executable, "-c", script, str(cache)], capture_output=True, text=True, timeout=600,
                         cwd=ROOT, env={**os.environ, "TI_OFFLINE_CACHE_FILE_PATH": str(cache)})
    assert out.returncode == 0, out.stderr[-3000:]
    assert int(out.stdout.strip().splitlines()[-1]) >= 1


def test_the_articulated_step_kernel_compiled_in_one_process_loads_from_the_cache_in_another(tmp_path):
    """On cpu the articulated step kernel's stages are functions that call one another in a chain, so that
    Taichi's key for the kernel's cache entry is the same in every process (``kernels/step.py``, ``chain``):
    a new process compiling it with a copy of the cache the suite's start filled (``taichi_terra.precompile``,
    in processes of its own) finds the entry there and adds none. (With its stand-ins off: with them a later
    process does not build the kernel's IR at all, ``tests/test_kernel_cache.py``.)"""
    from taichi_terra import backend, precompile

    assert precompile.missing(["trees-serial"], ("f64",)) == []
    cache = tmp_path / "cache"
    shutil.copytree(backend.offline_cache_path(), cache, ignore=shutil.ignore_patterns("*.lock"))
    before = sorted(p.name for p in cache.glob("*.tic"))
    script = ("import taichi_terra as tt\ntt.init(verbose=False, specialize=False)\n"
              "from taichi_terra import precompile\nprecompile._world('trees-serial').compile()\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=ROOT,
                         env={**os.environ, "TI_OFFLINE_CACHE_FILE_PATH": str(cache),
                              "TAICHI_TERRA_FRONT_CACHE": "0"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert before and sorted(p.name for p in cache.glob("*.tic")) == before


def test_init_refuses_f64_after_a_kernel_module_was_imported_in_float32():
    """A kernel module imported before ``init`` made its Taichi vector types in float32 (Taichi's default then):
    an f64 ``init`` raises, naming the module, instead of computing in them; imported after ``init`` (the usual
    order), the same module's types are float64. Reference: the dtype Taichi gives ``float`` at each moment."""
    script = textwrap.dedent("""
        import sys
        import taichi_terra as tt
        if sys.argv[1] == "before":
            import taichi_terra.kernels.solver.sweep
            try:
                tt.init("cpu", "f64")
            except RuntimeError as exc:
                print("refused:", exc)
        else:
            tt.init("cpu", "f64")
            import taichi_terra.kernels.solver.sweep as sweep
            print("dtype:", sweep.vec6.dtype)
    """)
    before = subprocess.run([sys.executable, "-c", script, "before"], capture_output=True, text=True, timeout=300,
                            cwd=ROOT)
    after = subprocess.run([sys.executable, "-c", script, "after"], capture_output=True, text=True, timeout=300,
                           cwd=ROOT)
    assert "refused:" in before.stdout and "taichi_terra.kernels.solver.sweep" in before.stdout, before.stderr[-2000:]
    assert "dtype: f64" in after.stdout, after.stderr[-2000:]
