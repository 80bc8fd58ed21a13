"""Height row revisions (the height-map spec's getHeightRowRevisions): one per sample row, advanced whenever
a height in that row changes, by a soil bed sinking or by a soil-state edit; never cleared."""
import numpy as np
import pytest

import taichi_terra as tt

N = 21  # samples per side of a 1 m bed: 5 cm spacing


def bed_world(n_envs=1):
    world = tt.World(dt=1e-3, n_envs=n_envs)
    mat = tt.SoilMaterial(bekker_kphi=1e5, sinkage_exponent=1.0, elastic_stiffness=1e6, damping=3e4)
    bed = world.add_deformable_terrain(N, N, 1.0, 1.0, 0.0, 0.0, np.zeros(N * N), mat)
    plate = world.add_box(0.2, 0.2, 0.02, 5.0)
    plate.set_position([0.0, 0.0, 0.009])  # 1 mm into the bed: loaded from the first step
    return world, bed, plate


def rows_under(bed, env=0):
    """Rows whose surface is below the undeformed one in ``env``."""
    s = bed.get_soil_state(env)["sinkage"].reshape(N, N)
    return set(np.nonzero(np.any(s != 0.0, axis=1))[0])


def test_sinking_advances_exactly_the_rows_that_changed():
    """A row's revision moves on in a step iff some height of the row changed in that step."""
    world, bed, plate = bed_world()
    rev0 = bed.get_height_row_revisions(0)
    assert rev0.shape == (N,) and not rev0.any()
    world.step(1)
    s_before = bed.get_soil_state(0)["sinkage"].reshape(N, N)
    rev1 = bed.get_height_row_revisions(0)
    assert set(np.nonzero(rev1 > rev0)[0]) == rows_under(bed)
    assert rows_under(bed) and len(rows_under(bed)) < N  # the plate covers some rows, not all
    for _ in range(5):
        world.step(1)
        s_now = bed.get_soil_state(0)["sinkage"].reshape(N, N)
        rev2 = bed.get_height_row_revisions(0)
        changed = set(np.nonzero(np.any(s_now != s_before, axis=1))[0])
        assert set(np.nonzero(rev2 != rev1)[0]) == changed
        assert np.all(rev2 >= rev1)  # never go back
        s_before, rev1 = s_now, rev2
    # lifting the plate away: the elastic part recovers, so the rut's rows change once more
    plate.set_position([0.0, 0.0, 2.0])
    world.step(1)
    rev3 = bed.get_height_row_revisions(0)
    assert set(np.nonzero(rev3 > rev1)[0]) == rows_under(bed)
    world.step(3)  # nothing loads the bed any more: no row changes
    assert np.array_equal(bed.get_height_row_revisions(0), rev3)


def test_soil_state_edits_and_restore_advance_revisions():
    """set_soil_state advances the rows whose sinkage it changes (in the envs it writes); an identical write
    advances nothing; restoring a checkpoint advances every row (the surface may differ from the drawn one)."""
    world, bed, _plate = bed_world(n_envs=2)
    world.build()
    n = N * N
    zero = np.zeros(n)
    s = zero.copy()
    s[7 * N + 3] = 0.01  # one sample of row 7
    bed.set_soil_state(s, zero, zero, env=1)
    rev = bed.get_height_row_revisions()
    assert rev.shape == (2, N)
    assert not rev[0].any()
    assert list(np.nonzero(rev[1])[0]) == [7]
    bed.set_soil_state(s, zero, zero, env=1)  # bit-identical: no change
    assert np.array_equal(bed.get_height_row_revisions(), rev)
    cp = world.checkpoint()
    world.restore(cp)
    assert np.array_equal(bed.get_height_row_revisions(), rev + 1)
    bed.reset_soil()
    assert bed.get_height_row_revisions(1)[7] == rev[1, 7] + 2


def test_edits_before_the_build_are_kept():
    world, bed, _plate = bed_world()
    s = np.zeros(N * N)
    s[2 * N:3 * N] = 0.005
    bed.set_soil_state(s, np.zeros(N * N), np.zeros(N * N))
    assert list(np.nonzero(bed.get_height_row_revisions(0))[0]) == [2]
    world.build()
    assert list(np.nonzero(bed.get_height_row_revisions(0))[0]) == [2]


def test_static_map_revisions_and_bad_env():
    world = tt.World(n_envs=3)
    hm = world.add_heightmap(4, 5, 1.0, 1.0, 0.0, 0.0, np.zeros(20))
    assert hm.get_height_row_revisions().shape == (3, 5)
    assert hm.get_height_row_revisions(2).shape == (5,)
    assert np.array_equal(hm.get_surface_heights(1), np.zeros(20))
    for bad in (3, -1, 1.5, "0"):
        with pytest.raises((ValueError, TypeError), match="env"):
            hm.get_height_row_revisions(bad)
