"""One Taichi initialisation per test process (cpu, f64: the reference backend)."""
import pytest

import taichi_terra as tt

tt.init(arch="cpu", precision="f64")


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(1234)
