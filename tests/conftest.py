"""One Taichi initialisation per test process: cpu, f64 (the reference backend), unless
``TAICHI_TERRA_TEST_ARCH`` and ``TAICHI_TERRA_TEST_PRECISION`` name another (``perf/device_check.sh`` runs the
kernel tests on cuda so; tests that compare bits with cpu f64 goldens are then expected to differ).

Before the workers start, the run installs the system software its tests use where it can (the Vulkan driver,
Xvfb, ffmpeg: ``taichi_terra/system.py``) and compiles the step kernel variants it uses into Taichi's cache
(``taichi_terra/precompile.py``)."""
import contextlib
import json
import os

import pytest

import taichi_terra as tt
from taichi_terra import precompile, system

#: what tests marked ``@pytest.mark.needs(name)`` use, beside Python packages
SYSTEM_NEEDS = ("vulkan", "xvfb", "ffmpeg")

#: step kernel variants the suite uses (its workers, the harness's cpu-f64 and cpu-f32 backends, the f32 tests)
VARIANTS = {"f64": tuple(precompile.VARIANTS),
            "f32": ("free-serial", "trees-serial")}


def _prepare_machine(config) -> None:
    """Once per run, before the workers start (they start after ``pytest_configure``), with pytest's output
    capture suspended so that what it does is shown: install the system software the tests use where this
    process may, and compile the step kernel variants the suite uses into Taichi's cache. Taichi writes its
    cache only as a process exits: without this, the workers and the processes tests start beside them each
    compile the same variants cold (taichi_terra/precompile.py); with a warm cache it returns at once."""
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
        system.provide(SYSTEM_NEEDS)
        if os.environ.get("TAICHI_TERRA_TEST_ARCH", "cpu") == "cpu":
            for precision, variants in VARIANTS.items():
                precompile.precompile(variants, (precision,))


#: examples each property-based target tried in this run (tests/test_fuzz*.py), and whether ``--fuzz-long`` was given
FUZZ_TRIED: dict = {}
FUZZ_LONG = False


def pytest_addoption(parser):
    parser.addoption("--fuzz-long", action="store_true", help="run the property-based tests with 25 times the examples")


def pytest_configure(config):
    global FUZZ_LONG
    FUZZ_LONG = bool(config.getoption("--fuzz-long"))
    if "PYTEST_XDIST_WORKER" not in os.environ:
        _prepare_machine(config)
    # one step kernel with every optional part for all the suite's articulated worlds: compiled once per
    # process rather than once per combination of parts (test_kernel_features.py checks the specialised ones)
    tt.init(arch=os.environ.get("TAICHI_TERRA_TEST_ARCH", "cpu"),
            precision=os.environ.get("TAICHI_TERRA_TEST_PRECISION", "f64"), specialize=False)
    config.addinivalue_line("markers", "needs(name): the test uses system software named in "
                            "taichi_terra.system.PACKAGES ('vulkan', 'xvfb', 'ffmpeg')")
    if os.environ.get("CI") and "PYTEST_XDIST_WORKER" not in os.environ:
        lacking = system.missing(SYSTEM_NEEDS)  # (CI runs as root: every test runs there, none is skipped)
        if lacking:
            raise pytest.UsageError("CI: " + "; ".join(system.why_missing(n) for n in lacking))


def pytest_runtest_setup(item):
    """A test marked ``needs(name)`` is skipped where ``name`` is missing; the test run installed it first
    where it could (root and apt-get), so a skip names why it could not and the command that would."""
    for mark in item.iter_markers("needs"):
        for name in mark.args:
            if not system.available(name):
                pytest.skip(system.why_missing(name))


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: hand the counts to the controller
        workeroutput["fuzz_tried"] = json.dumps(FUZZ_TRIED)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist's controller: add up the counts of the worker that finished."""
    for target, count in json.loads(getattr(node, "workeroutput", {}).get("fuzz_tried", "{}")).items():
        FUZZ_TRIED[target] = FUZZ_TRIED.get(target, 0) + count


def pytest_terminal_summary(terminalreporter):
    if FUZZ_TRIED:
        terminalreporter.write_line("examples tried per fuzzed target: " + ", ".join(
            f"{target} {count}" for target, count in sorted(FUZZ_TRIED.items())))


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(1234)

