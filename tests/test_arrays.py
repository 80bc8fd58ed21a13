"""The packed arrays are declared once (``kernels/common/arrays.py``): numpy packing, numpy views and the
kernels' accessors all follow from the declarations, and every kernel binds few arrays."""
import importlib
import inspect
import pkgutil

import numpy as np
import pytest
import taichi as ti

import taichi_terra as tt
from taichi_terra.backend import np_real, ti_real
from taichi_terra.kernels.common import arrays as A
from taichi_terra.kernels.common.schema import Arena, Block, BlockRef, get, getn, put, putn

MAX_ARRAYS_PER_KERNEL = 16


@ti.kernel
def _copy_through_accessors(src: ti.types.ndarray(), dst: ti.types.ndarray(), offs: ti.types.ndarray(),
                            rows: ti.types.ndarray(), arena: ti.template()):
    """Copy every column of every block of ``arena`` from ``src`` to ``dst`` through the accessors, one column
    at a time (width 1 by ``get``/``put``, wider by ``getn``/``putn``)."""
    for e in range(dst.shape[0] if ti.static(arena.per_env) else 1):
        offsets = ti.Vector([offs[k] for k in ti.static(range(len(arena.blocks)))])
        for bi in ti.static(range(len(arena.blocks))):
            _copy_block(BlockRef(src, arena.blocks[bi], arena.per_env, offsets=offsets, index=bi),
                        BlockRef(dst, arena.blocks[bi], arena.per_env, offsets=offsets, index=bi), e, rows[bi])


@ti.func
def _copy_block(s: ti.template(), d: ti.template(), e, n):
    for c in ti.static(range(len(s.block.columns))):
        for i in range(n):
            _copy_column(s, d, e, i, ti.static(list(s.block.columns.values())[c][0]),
                         ti.static(list(s.block.columns.values())[c][1]))


@ti.func
def _copy_column(s: ti.template(), d: ti.template(), e, i, col: ti.template(), width: ti.template()):
    if ti.static(width == 1):
        put(d, e, i, col, get(s, e, i, col))
    else:
        putn(d, e, i, col, getn(s, e, i, col, width))


def _rows(arena):
    """Small, different row counts per block (the declared row meaning does not matter here)."""
    return {b.name: 2 + k for k, b in enumerate(arena.blocks)}


@pytest.mark.filterwarnings("ignore:You are unrolling more than")  # (the offsets row: one column per block)
@pytest.mark.parametrize("arena", A.ARENAS, ids=[a.name for a in A.ARENAS])
def test_packing_views_and_accessors_agree(arena):
    """Reference: the declaration. Data packed column by column from the declaration, copied column by column
    by the kernel accessors into a zeroed array, comes back identical; and each column's numpy view returns
    exactly what was packed into it. A wrong offset, stride or width in any of the three would misplace a
    column."""
    tt.init()
    real = np_real()
    layout = arena.layout(_rows(arena))
    n_envs = 3 if arena.per_env else None
    rng = np.random.default_rng(len(arena.name))
    values = {}
    for b in arena.blocks:
        values[b.name] = {}
        for col, (_c0, width) in b.columns.items():
            shape = ((n_envs,) if arena.per_env else ()) + (layout.rows[b.name], width)
            values[b.name][col] = rng.integers(-1000, 1000, size=shape)
    data = layout.pack(real, values, n_envs)
    covered = sum(layout.rows[b.name] * b.stride for b in arena.blocks)
    assert covered == layout.size or (covered == 0 and layout.size == 1)
    for b in arena.blocks:
        for col in b.columns:
            np.testing.assert_array_equal(layout.view(data, b.name, col), values[b.name][col])
    src = ti.ndarray(arena.ti_dtype(ti_real()), data.shape)
    src.from_numpy(data)
    dst = ti.ndarray(arena.ti_dtype(ti_real()), data.shape)
    dst.fill(0)
    offs = ti.ndarray(ti.i32, (len(arena.blocks),))
    offs.from_numpy(np.array([layout.offsets[b.name] for b in arena.blocks], np.int32))
    rows = ti.ndarray(ti.i32, (len(arena.blocks),))
    rows.from_numpy(np.array([layout.rows[b.name] for b in arena.blocks], np.int32))
    _copy_through_accessors(src, dst, offs, rows, arena)
    np.testing.assert_array_equal(dst.to_numpy(), data)


def test_world_offsets_row_matches_the_layouts():
    """Reference: the layouts a built world computed. The ``offsets`` row the kernels read holds every block's
    offset, and each per-env array has its layout's size."""
    w = tt.World(n_envs=2)
    w.add_ground()
    w.add_box(0.2, 0.2, 0.2, 1.0)
    w.add_sphere(0.1, 1.0)
    w.build()
    m = w._model
    offsets = m.layouts["model_i"].view(m.model_i.to_numpy(), "offsets")[0]
    for arena in A.ARENAS:
        for block in arena.blocks:
            if block is not A.OFFSETS:
                assert offsets[A.offset_column(arena, block)] == m.layouts[arena.name].offsets[block.name]
    for group in (w._state, w._control, w._scratch):
        for name, arr in group.arrays().items():
            assert arr.shape == (2, m.layouts[name].size), name


def test_declarations_reject_bad_blocks():
    """Column names are unique, widths positive; an arena's blocks are unique and its role one of four."""
    with pytest.raises(ValueError, match="repeated"):
        Block("b", [("x", 1), ("x", 2)])
    with pytest.raises(ValueError, match="width"):
        Block("b", [("x", 0)])
    with pytest.raises(ValueError, match="names repeat"):
        Arena("a", "real", True, [Block("b", [("x", 1)]), Block("b", [("y", 1)])], "state")
    with pytest.raises(ValueError, match="role"):
        Arena("a", "real", True, [], "cache")
    with pytest.raises(ValueError, match="missing"):
        A.STATE_F.layout({"contact": 1})


def _kernels():
    """Every Taichi kernel defined in the package's kernels."""
    import taichi_terra.kernels as pkg

    found = []
    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if callable(obj) and hasattr(obj, "_primal") and getattr(obj, "__module__", None) == module.__name__:
                found.append((f"{info.name}.{name}", obj))
    return found


def test_every_kernel_binds_at_most_16_arrays():
    """Reference: the Vulkan limit we design for (lavapipe drops a kernel's 32nd array, crashes at the 34th;
    16 leaves room for the subsystems still to come). Ndarray arguments and template arguments (fields) both
    take a binding."""
    kernels = _kernels()
    assert any(name.endswith("step.simulate") for name, _k in kernels)
    counts = {}
    for name, kernel in kernels:
        params = inspect.signature(kernel._primal.func).parameters.values()
        counts[name] = sum(1 for p in params if isinstance(p.annotation, ti.types.ndarray_type.NdarrayType)
                           or isinstance(p.annotation, type(ti.template())))
    too_many = {name: n for name, n in counts.items() if n > MAX_ARRAYS_PER_KERNEL}
    assert not too_many, too_many
    assert counts[next(n for n in counts if n.endswith("step.simulate"))] == len(A.ARENAS)


@ti.kernel
def _table_column(arr: ti.types.ndarray(), out: ti.types.ndarray(), col: ti.template(), width: ti.template(),
                  scalar: ti.template()):
    """``out[e, i, :width] = arr[e, i][col:col + width]`` (a scalar table: the element itself)."""
    for e, i in ti.ndrange(out.shape[0], out.shape[1]):
        if ti.static(scalar):
            out[e, i, 0] = arr[e, i]
        else:
            for j in ti.static(range(width)):
                out[e, i, j] = arr[e, i][col + j]


def test_planar_tables_follow_their_declarations():
    """Reference: the declarations in ``kernels/planar/arrays.py``. Each per-env table allocated from data
    shaped (n_envs, rows, stride) gives every declared column back, read in a kernel by the column's offset
    (a wrong stride, offset or element shape would misplace or cut a column); a planar checkpoint holds the
    state and control tables and no scratch."""
    from taichi_terra.kernels.planar import arrays as PL
    from taichi_terra.planar.model import PlanarArrays

    tt.init()
    rows = {"objects": 3, "vertices": 5, "pairs": 4, "blockers": 8, "objects+2": 5}
    rng = np.random.default_rng(7)
    for table in PL.TABLES:
        n = rows[table.rows] if table.rows else 1
        data = rng.integers(-1000, 1000, size=(2, n, table.block.stride))
        arr = table.allocate(ti_real(), 2, rows, data if table.rows else data[:, 0])
        np.testing.assert_array_equal(arr.to_numpy().reshape(data.shape), data)
        if not table.rows:
            continue
        for col, (c0, width) in table.block.columns.items():
            out = ti.ndarray(ti_real() if table.dtype == "real" else ti.i32, (2, n, width))
            _table_column(arr, out, c0, width, table.scalar)
            np.testing.assert_array_equal(out.to_numpy(), data[:, :, c0:c0 + width], err_msg=f"{table.name}.{col}")
    roles = {t.name: t.role for t in PL.TABLES}
    assert set(PlanarArrays.STATE) == {n for n, r in roles.items() if r in ("state", "control")}
    assert roles["cmd"] == "control" and roles["pose0"] == "scratch"


def test_vulkan_loops_launch_a_power_of_two_threads_from_32_up_to_the_limit():
    """Reference: the rule of kernels/common/lanes.py (thread i takes item i, so every item needs a thread)."""
    from taichi_terra.kernels.common.lanes import MAX_LANES, gpu_lanes

    assert [gpu_lanes(n) for n in (0, 1, 32, 33, 64, 1000, 4096, 4097)] == [32, 32, 32, 64, 64, 1024, 4096, 8192]
    assert gpu_lanes(MAX_LANES) == MAX_LANES
    assert gpu_lanes(MAX_LANES + 1) == 0  # (Taichi's own grid-stride loop)


def test_a_row_view_gives_a_row_kind_its_own_names_for_existing_columns():
    """A view names columns of the shared block (same offsets); a name for a column the block lacks, or a
    reserved name, is refused."""
    from taichi_terra.kernels.common.schema import RowView

    assert (A.JOINT_ROW.dof, A.JOINT_ROW.joint, A.JOINT_ROW.sign, A.JOINT_ROW.tree) == (
        A.ROW_I.slot, A.ROW_I.pair, A.ROW_I.side_a, A.ROW_I.side_b)
    assert (A.PIN_ROW.pin, A.PIN_ROW_F.k) == (A.ROW_I.pair, A.ROW_F.frame)
    with pytest.raises(ValueError, match="'nope' is not one of its columns"):
        RowView(A.ROW_I, dof="nope")
    with pytest.raises(ValueError, match="reserved"):
        RowView(A.ROW_I, names="slot")
