"""Packed arrays declared once: blocks of named columns inside a few flat arrays ("arenas").

A kernel binds few arrays (Vulkan drivers bind a limited number per kernel; lavapipe drops the 32nd), so
the data of a world lives in a handful of flat arrays, each holding several *blocks* at offsets, as
MuJoCo's ``mjData`` arena does. A :class:`Block` is a table: a number of rows (bodies, contact slots,
soil samples...), each with named columns of given widths. An :class:`Arena` is one Taichi ndarray of
one dtype, per env (``[env, k]``) or shared by all envs (``[k]``), holding its blocks one after the other.

Everything about a block is declared once, where the block is declared:
- the column offsets are Python ints, so kernels read them as compile-time constants
  (``get3(D.contact, e, s, CONTACT.normal)``);
- :meth:`Arena.layout` turns row counts into offsets and a size (a :class:`Layout`); its
  :meth:`Layout.pack` builds the numpy data of the whole arena from per-block arrays and
  :meth:`Layout.view` returns the numpy view of one block (or one column of it);
- the block offsets reach the kernels through the ``offsets`` row of the model's integer arena, and
  :class:`BlockRef` (a block, its arena's array and its offset) is what kernel functions take.

Accessors below read and write through a :class:`BlockRef`; ``e`` is the env index (ignored for
arenas shared by all envs), ``i`` the row, ``col`` a column offset.
"""

from dataclasses import dataclass

import numpy as np
import taichi as ti
from taichi.lang import impl
from taichi.lang.expr import Expr
from taichi.lang.matrix import make_matrix

from ...frontend import builds_code


class Block:
    """A table of ``rows x stride`` values with named columns.

    Args:
        name: the block's name (unique within its arena).
        columns: ``(column name, width)`` pairs in storage order; each name becomes an attribute
            holding the column's offset within a row.
        doc: what one row is, with units.
    """

    def __init__(self, name: str, columns, doc: str = ""):
        self.name = name
        self.doc = doc
        self.columns: dict[str, tuple[int, int]] = {}
        off = 0
        for col, width in columns:
            if col in self.columns or hasattr(type(self), col) or col in ("name", "doc", "columns", "stride"):
                raise ValueError(f"block {name}: column name {col!r} is repeated or reserved")
            if int(width) < 1:
                raise ValueError(f"block {name}: column {col!r} must have width >= 1")
            self.columns[col] = (off, int(width))
            setattr(self, col, off)
            off += int(width)
        self.stride = off

    def __repr__(self) -> str:
        return f"Block({self.name}, stride={self.stride})"


class RowView:
    """One row kind's names for columns of a block that several kinds of row share: each keyword names a column
    of ``block`` (its offset becomes the attribute), so a joint row reads ``JOINT_ROW.dof`` where the block
    calls the column ``slot``. The names must be new and the columns must exist.

    Args:
        block: the shared block.
        doc: which rows the view is for, and what each name holds.
        names: ``new name = column of block``.
    """

    def __init__(self, block: Block, doc: str = "", **names):
        self.block, self.doc, self.names = block, doc, dict(names)
        for new, col in names.items():
            if col not in block.columns:
                raise ValueError(f"view of block {block.name}: {col!r} is not one of its columns")
            if new in ("block", "doc", "names"):
                raise ValueError(f"view of block {block.name}: name {new!r} is reserved")
            setattr(self, new, block.columns[col][0])

    def __repr__(self) -> str:
        return f"RowView({self.block.name}: {self.names})"


class Arena:
    """One flat array of ``dtype`` holding ``blocks`` in order.

    Args:
        name: the array's name (also the attribute that holds it on Model / State / Control / Scratch).
        dtype: ``"real"`` (the backend's float precision), ``"i32"`` or ``"i64"``.
        per_env: ``True``: shape ``(n_envs, size)``; ``False``: shape ``(size,)``.
        blocks: the blocks, in storage order.
        role: ``"model"``, ``"state"``, ``"control"`` or ``"scratch"``.
    """

    def __init__(self, name: str, dtype: str, per_env: bool, blocks, role: str):
        if dtype not in ("real", "i32", "i64"):
            raise ValueError(f"arena {name}: dtype must be 'real', 'i32' or 'i64'")
        if role not in ("model", "state", "control", "scratch"):
            raise ValueError(f"arena {name}: role must be model, state, control or scratch")
        self.name, self.dtype, self.per_env, self.role = name, dtype, per_env, role
        self.blocks = list(blocks)
        names = [b.name for b in self.blocks]
        if len(set(names)) != len(names):
            raise ValueError(f"arena {name}: block names repeat")
        self.block = {b.name: b for b in self.blocks}

    def np_dtype(self, real) -> np.dtype:
        """The numpy dtype of the arena (``real``: the backend's float type)."""
        return np.dtype({"real": real, "i32": np.int32, "i64": np.int64}[self.dtype])

    def ti_dtype(self, real):
        """The Taichi dtype of the arena (``real``: the backend's float type)."""
        return {"real": real, "i32": ti.i32, "i64": ti.i64}[self.dtype]

    def layout(self, rows: dict[str, int]) -> "Layout":
        """Offsets of every block for the given row counts (every block must be given)."""
        missing = [b.name for b in self.blocks if b.name not in rows]
        if missing:
            raise ValueError(f"arena {self.name}: row counts missing for {missing}")
        offsets, off = {}, 0
        for b in self.blocks:
            n = int(rows[b.name])
            if n < 0:
                raise ValueError(f"arena {self.name}: block {b.name} has {n} rows")
            offsets[b.name] = off
            off += n * b.stride
        return Layout(self, offsets, {b.name: int(rows[b.name]) for b in self.blocks}, max(off, 1))


@dataclass
class Layout:
    """Where each block of an arena sits for one world: offsets and row counts; ``size`` the arena's
    length (at least 1, so that an empty arena is still a valid array)."""

    arena: Arena
    offsets: dict
    rows: dict
    size: int

    def view(self, data: np.ndarray, block: str, col: str | None = None) -> np.ndarray:
        """The numpy view of ``block`` (shape ``(..., rows, stride)``) or of one of its columns
        (``(..., rows, width)``) inside ``data``, the arena's numpy data (env axis first if per env)."""
        b = self.arena.block[block]
        off, n = self.offsets[block], self.rows[block]
        lead = data.shape[:-1]
        rows = data[..., off:off + n * b.stride].reshape(lead + (n, b.stride))
        if col is None:
            return rows
        c0, w = b.columns[col]
        return rows[..., c0:c0 + w]

    def empty(self, real, n_envs: int | None = None) -> np.ndarray:
        """Zeros in the arena's shape."""
        shape = (n_envs, self.size) if self.arena.per_env else (self.size,)
        return np.zeros(shape, self.arena.np_dtype(real))

    def pack(self, real, values: dict, n_envs: int | None = None) -> np.ndarray:
        """The arena's numpy data from ``{block: {column: array}}``; each array broadcasts to the column's
        view (``(rows, width)``, with the env axis first for a per-env arena); unnamed columns are zero."""
        data = self.empty(real, n_envs)
        for block, cols in values.items():
            for col, arr in cols.items():
                view = self.view(data, block, col)
                view[...] = np.asarray(arr).reshape(view.shape) if np.size(arr) == view.size else arr
        return data


class Table:
    """A per-env array of rows, each row one vector holding a block's columns: shape ``(n_envs, rows)``
    with element ``vector(stride)`` (a scalar when ``scalar`` and the stride is 1). Kernels index it as
    ``arr[e, i][col]`` with the block's column offsets; it suits small worlds whose kernels loop over
    (env, row) in parallel, where a flat arena would only add offset arithmetic.

    Args:
        block: the row's columns.
        dtype: ``"real"``, ``"i32"`` or ``"i64"``.
        rows: what the rows count (a key of the row counts given to :meth:`allocate`).
        role: ``"state"``, ``"control"`` or ``"scratch"``.
        scalar: store a one-column row as a scalar, not a 1-vector.
    """

    def __init__(self, block: Block, dtype: str, rows: str, role: str, scalar: bool = False):
        if dtype not in ("real", "i32", "i64"):
            raise ValueError(f"table {block.name}: dtype must be 'real', 'i32' or 'i64'")
        if role not in ("state", "control", "scratch"):
            raise ValueError(f"table {block.name}: role must be state, control or scratch")
        if scalar and block.stride != 1:
            raise ValueError(f"table {block.name}: only a one-column row can be a scalar")
        self.block, self.dtype, self.rows, self.role, self.scalar = block, dtype, rows, role, scalar
        self.name = block.name

    def allocate(self, real, n_envs: int, rows: dict[str, int], data=None):
        """The Taichi ndarray for ``n_envs`` envs (``rows[self.rows]`` rows each), zero or from ``data``
        (anything that reshapes to ``(n_envs, rows, stride)``)."""
        ti_dtype = {"real": real, "i32": ti.i32, "i64": ti.i64}[self.dtype]
        shape = (n_envs, int(rows[self.rows])) if self.rows else (n_envs,)
        elem = () if self.scalar else (self.block.stride,)
        arr = ti.ndarray(ti_dtype if self.scalar else ti.types.vector(self.block.stride, ti_dtype), shape)
        if data is None:
            arr.fill(0)
        else:
            np_dtype = {"real": ti.lang.util.to_numpy_type(real), "i32": np.int32, "i64": np.int64}[self.dtype]
            arr.from_numpy(np.ascontiguousarray(np.asarray(data).reshape(shape + elem), dtype=np_dtype))
        return arr


class BlockRef:
    """What kernel functions take to reach a block: the arena's array, the block's declaration
    (compile-time columns) and ``off``, where the block starts: an int, or entry ``index`` of ``offsets``
    (an array or a kernel-local vector holding the block offsets), read once into a local variable. Built
    while a kernel is compiled."""

    def __init__(self, arr, block: Block, per_env: bool, offset: int = 0, offsets=None, index: int = 0):
        self.arr, self.block, self.per_env = arr, block, per_env
        self.off = offset if offsets is None else impl.expr_init(impl.subscript(None, offsets, index))


# The accessors below run while a kernel is compiled, called from kernel code like ``ti.func``s, but as plain
# Python that builds the loads and stores directly: there are thousands of calls in the step kernel, and
# Taichi's front end parses and transforms a ``ti.func``'s body again at each of them (28 AST nodes a read;
# the articulated step kernel made 3,507 ``get`` calls). They keep a ``ti.func``'s meaning: what they read
# is copied into a local variable at the call, and a value to write is taken as it is at the call.


def _local(x):
    """``x`` as a kernel-local variable (a Python number stays a number)."""
    return impl.expr_init(x) if isinstance(x, Expr) else x


def _at(ref, e, k):
    """Element ``k`` of env ``e``'s part of ``ref``'s array (the array's own index for a shared one)."""
    return impl.subscript(None, ref.arr, e, k) if ref.per_env else impl.subscript(None, ref.arr, k)


def _start(ref, i, col):
    """Where column ``col`` of row ``i`` sits in the arena."""
    return _local(ref.off + i * ref.block.stride + col)


@builds_code
def get(ref, e, i, col):
    """Column ``col`` (width 1) of row ``i``."""
    return impl.expr_init(_at(ref, e, ref.off + i * ref.block.stride + col))


@builds_code
def put(ref, e, i, col, value):
    """Write column ``col`` (width 1) of row ``i``."""
    _at(ref, e, ref.off + i * ref.block.stride + col)._assign(value)


@builds_code
def add(ref, e, i, col, value):
    """Add to column ``col`` (width 1) of row ``i``. On a per-env array a plain read and write, not an atomic
    add: every kernel that writes an env's rows runs that env on one thread (Taichi makes ``+=`` atomic
    unless it can see that the loop index alone picks the row, which the step's spread env loop hides:
    ``step.env_spread``)."""
    k = _start(ref, i, col)
    if ref.per_env:
        _at(ref, e, k)._assign(_at(ref, e, k) + value)
    else:
        _at(ref, e, k)._augassign(value, "Add")


@builds_code
def getn(ref, e, i, col, n):
    """Columns ``col`` to ``col + n - 1`` of row ``i`` as a vector."""
    k = _start(ref, i, col)
    return impl.expr_init(make_matrix([_at(ref, e, k + j) for j in range(n)]))


@builds_code
def putn(ref, e, i, col, value):
    """Write the vector ``value`` to the columns starting at ``col`` of row ``i``."""
    value = impl.expr_init(value)
    k = _start(ref, i, col)
    for j in range(value.get_shape()[0]):
        _at(ref, e, k + j)._assign(impl.subscript(None, value, j))


@builds_code
def get3(ref, e, i, col):
    """Three columns from ``col`` as a 3-vector."""
    return getn(ref, e, i, col, 3)


@builds_code
def get33(ref, e, i, col):
    """A 3x3 matrix stored row by row in the 9 columns from ``col``."""
    k = _start(ref, i, col)
    return impl.expr_init(make_matrix([[_at(ref, e, k + 3 * r + c) for c in range(3)] for r in range(3)]))


@builds_code
def put33(ref, e, i, col, m):
    """Write a 3x3 matrix row by row to the 9 columns from ``col``."""
    m = impl.expr_init(m)
    k = _start(ref, i, col)
    for r in range(3):
        for c in range(3):
            _at(ref, e, k + 3 * r + c)._assign(impl.subscript(None, m, r, c))


@builds_code
def row(ref, e, i):
    """Every column of row ``i`` as one vector (unused entries cost nothing at run time)."""
    return getn(ref, e, i, 0, ref.block.stride)


@builds_code
def put_row(ref, e, i, value):
    """Write every column of row ``i`` from a vector of the block's stride."""
    putn(ref, e, i, 0, value)
