"""One Taichi initialisation per test process: cpu, f64 (the reference backend), unless
``TAICHI_TERRA_TEST_ARCH`` and ``TAICHI_TERRA_TEST_PRECISION`` name another (``perf/device_check.sh`` runs the
kernel tests on cuda so; tests that compare bits with cpu f64 goldens are then expected to differ)."""
import os

import pytest

import taichi_terra as tt

tt.init(arch=os.environ.get("TAICHI_TERRA_TEST_ARCH", "cpu"),
        precision=os.environ.get("TAICHI_TERRA_TEST_PRECISION", "f64"))


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(1234)
