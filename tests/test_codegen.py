"""The LLVM code-generator options taichi_terra sets on cpu (``taichi_terra/codegen.py``): they are in place in
this process, and a process without them steps the same world to the same bits.

Reference: the options only leave out optional passes (loop strength reduction, CodeGenPrepare, machine
loop-invariant code motion, the post-register-allocation scheduler and x86 domain reassignment in the code
generator; runtime unrolling in the optimisation pipeline), which rewrite address arithmetic, copy loop bodies
and move or reorder instructions but may not change what a floating-point operation computes (Taichi runs
without fast math on cpu); so the trajectories must be equal bit for bit, not merely close. (The other process
also compiles the step kernel with only the parts its world uses, ``specialize``'s default, where this one runs
the suite's kernel with every part: that kernel must step the world to the same bits too,
``test_kernel_features.py``, and compiles in less time.)"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import taichi_terra as tt
from taichi_terra import codegen
from helpers import STAND

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CPU = os.environ.get("TAICHI_TERRA_TEST_ARCH", "cpu") == "cpu"

pytestmark = pytest.mark.skipif(not CPU, reason="the options apply to the cpu backend's code generator only")

WITHOUT_OPTIONS = """
import sys
import numpy as np
sys.path.insert(0, {here!r})
import taichi_terra as tt
from taichi_terra import codegen
tt.init("cpu", "f64", verbose=False)
assert codegen.applied() == (), codegen.applied()
from test_codegen import trajectory
np.savez(sys.argv[1], **trajectory())
"""


def trajectory() -> dict:
    """A world that runs most of the articulated step kernel: the quadruped under PD dropped onto a soil bed
    (contacts, the tree solve, the soil law and its history) with two free boxes falling onto the bed beside
    it; the bodies' states and the bed's after each of four chunks of 150 steps."""
    n = 31
    world = tt.World(dt=1e-3)
    mat = tt.SoilMaterial(bekker_kphi=2e7, sinkage_exponent=1.0, damping=2e4)
    bed = world.add_deformable_terrain(n, n, 1.5, 1.5, 0.0, 0.0, np.zeros(n * n), mat)
    system = world.add_articulated_system((HERE / "data" / "urdf" / "quadruped.urdf").read_text(),
                                          position=(0.0, 0.0, 0.45))
    q = system.get_generalized_coordinate(0)
    q[7:] = STAND
    system.set_generalized_coordinate(q)
    system.set_pd_gains(np.r_[np.zeros(6), np.full(12, 300.0)], np.r_[np.zeros(6), np.full(12, 20.0)])
    system.set_pd_target(q, np.zeros(18))
    boxes = [world.add_box(0.1, 0.12, 0.08, 1.0 + k) for k in range(2)]
    for k, (box, y) in enumerate(zip(boxes, (-0.5, 0.5))):
        box.set_position([0.3, y, 0.2 + 0.1 * k])
    out = {}
    for chunk in range(4):
        world.step(150)
        out[f"q{chunk}"] = system.get_generalized_coordinate(0)
        out[f"u{chunk}"] = system.get_generalized_velocity(0)
        out[f"bodies{chunk}"] = np.stack([np.concatenate([b.get_position(), b.get_orientation(),
                                                          b.get_linear_velocity(), b.get_angular_velocity()],
                                                         axis=1)[0] for b in boxes])
        for key, value in bed.get_soil_state(0).items():
            out[f"soil{chunk}_{key}"] = value
    return out


def test_the_options_are_in_place():
    """This process (initialised for cpu by the suite) passed the default options, all of which this Taichi's
    LLVM knows; a second ``apply`` passes nothing again and returns the same."""
    if os.environ.get(codegen.ENV_VAR) is not None:
        pytest.skip(f"{codegen.ENV_VAR} is set: the run chose its own options")
    assert codegen.applied() == codegen.DEFAULT_OPTIONS
    assert codegen.apply() == codegen.DEFAULT_OPTIONS


def test_the_cache_is_keyed_by_the_options_that_change_the_ir(monkeypatch):
    """Taichi's cache key misses LLVM's options: the seed taichi_terra gives Taichi (part of the key) is 0 for
    none or for code-generator options alone (the cached IR is the same), and differs between sets that change
    the IR; the precompile markers follow it."""
    from taichi.lang import impl

    from taichi_terra import precompile

    assert impl.current_cfg().random_seed == codegen.cache_salt()
    assert codegen.cache_salt(()) == 0
    assert codegen.cache_salt(sorted(codegen.CODEGEN_ONLY)) == 0
    no_unroll = codegen.cache_salt(("-disable-lsr", "-unroll-runtime=false"))
    assert no_unroll != 0 and no_unroll == codegen.cache_salt(("-unroll-runtime=false",))
    assert codegen.cache_salt(("-unroll-runtime=false", "-unroll-threshold=50")) not in (0, no_unroll)
    marks = set()
    for options in ("", "-disable-lsr", "-unroll-runtime=false"):
        monkeypatch.setenv(codegen.ENV_VAR, options)
        marks.add(precompile.fingerprint("cpu", "f64"))
    assert len(marks) == 2  # the code-generator option alone shares the marker of no options


def test_the_environment_variable_replaces_the_defaults(monkeypatch):
    monkeypatch.setenv(codegen.ENV_VAR, "-disable-lsr  -enable-misched=false")
    assert codegen.requested() == ("-disable-lsr", "-enable-misched=false")
    monkeypatch.setenv(codegen.ENV_VAR, "")
    assert codegen.requested() == ()
    monkeypatch.delenv(codegen.ENV_VAR)
    assert codegen.requested() == codegen.DEFAULT_OPTIONS


def test_options_that_cannot_be_passed_are_named():
    """A process whose ``TAICHI_TERRA_LLVM_OPTIONS`` holds an option LLVM does not have and a word without a
    dash passes the rest and warns naming the two."""
    env = dict(os.environ, **{codegen.ENV_VAR: "-disable-lsr -no-such-option foo"})
    run = subprocess.run([sys.executable, "-c", "from taichi_terra import codegen; print(codegen.apply())"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "('-disable-lsr',)"
    assert "UserWarning" in run.stderr and "not passed to LLVM: -no-such-option foo" in run.stderr


def test_a_file_that_is_not_taichi_finds_no_entry(tmp_path):
    """Where the entry point cannot be found, nothing is called: a file that is not ELF, and an ELF file
    (Python's own executable or library) whose symbols do not name it."""
    not_elf = tmp_path / "taichi_python.so"
    not_elf.write_bytes(b"not an ELF file" * 10)
    assert codegen._find_entry(not_elf, ["disable-lsr"]) is None
    assert codegen._find_entry(Path(sys.executable).resolve(), ["disable-lsr"]) is None


def test_same_bits_without_the_options(tmp_path):
    """The same world stepped in a process that passed no options to LLVM (Taichi's own code generator)
    and in this one: every array equal bit for bit."""
    if not codegen.applied():
        pytest.skip("no options were passed in this process: nothing to compare")
    out = tmp_path / "without.npz"
    env = dict(os.environ, **{codegen.ENV_VAR: ""})
    run = subprocess.run([sys.executable, "-c", WITHOUT_OPTIONS.format(here=str(HERE)), str(out)],
                         capture_output=True, text=True, timeout=900, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    got = trajectory()
    want = dict(np.load(out))
    assert sorted(got) == sorted(want)
    moved = np.abs(got["q3"][:3] - got["q0"][:3]).max() + np.abs(got["bodies3"][:, 2] - got["bodies0"][:, 2]).min()
    assert moved > 1e-3  # the robot and boxes did move: the comparison is not of a resting state
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
