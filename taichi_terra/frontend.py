"""Less work in Taichi's Python front end, which runs in every process that compiles a kernel.

Taichi 1.7 turns a kernel's Python source into its IR in every process, whether or not the offline cache
holds the compiled kernel (the cache is keyed by that IR, so it cannot be skipped). A ``ti.func`` is inlined:
its source is read, parsed and transformed again at each call site. Two parts of that work repeat without
need, and :func:`speed_up` removes them:

- the source of each function is looked up with ``inspect.getsourcelines`` (which tokenizes the module up to
  the function) and re-wrapped line by line at every call site; it is read once per function here;
- a message describing the source position (file, line, the source lines and a line of carets, wrapped to
  80 columns) is formatted for every node visited, whether or not an error is reported; a short form without
  the carets keeps what an error needs to find the code (file, line, function and the source line).

A third part is the small vector and matrix operations (``@``, ``dot``, ``cross``, ``norm``, ``sum``,
``transpose``, ``outer_product``, the zero and identity matrices): Taichi writes them as functions in its own
language, so each use parses and transforms their bodies, with ``ti.static`` loops unrolled one node at a time
(in the articulated step kernel, 317 uses of ``@`` alone were 213k of its 783k AST nodes).
:func:`_direct_matrix_ops` builds the same expressions from Python instead, as functions marked with
:func:`builds_code` (the arena accessors of ``kernels/common/schema.py`` are written that way too).

A fourth is the generic machinery every node, value and subscript passes through: :func:`_direct_subscripts`,
:func:`_direct_expressions` and :func:`_direct_dispatch` take the commonest cases (an ndarray or local matrix
indexed by integers and expressions; a C++ expression or a literal wrapped as an ``Expr``; a node handed to its
builder) by a direct path to the same IR, which took the quadruped's articulated step kernel's front end from
3.8 s to 2.2 s (``tests/test_startup.py`` compares the IR both ways through Taichi's cache keys).

All are installed once, and only where Taichi's front end has the functions with the attributes they read;
other Taichi versions keep their own.

It also fixes one defect: :func:`inline_into_real_functions` (without it, a ``ti.func`` called inside a
``ti.real_func`` computes wrong results, see there).
"""
from __future__ import annotations

import functools


def speed_up() -> None:
    """Install the source cache, the short source positions, the direct small-matrix operations,
    subscripts, constants, expression wrappers and node dispatch, and the fix that lets real functions inline
    functions (idempotent)."""
    _cache_sources()
    _short_source_positions()
    _direct_matrix_ops()
    _direct_subscripts()
    _direct_expressions()
    _direct_dispatch()
    inline_into_real_functions()


def _unpatched(owner, name: str, marker: str):
    """``owner.name`` where it exists and is not already taichi_terra's version (which carries the attribute
    ``marker``), else None: the patches below install themselves once, and not over a Taichi that lacks what
    they replace."""
    original = getattr(owner, name, None)
    return None if original is None or getattr(original, marker, False) else original


def inline_into_real_functions() -> bool:
    """Make a ``ti.func`` called inside a ``ti.real_func`` build its statements into that real function.

    Taichi 1.7 inlines a ``ti.func`` by transforming its body with the AST builder of the kernel being
    compiled (``current_kernel``), also where the call sits inside a real function, whose statements go to
    a builder of their own (``compiling_callable``). An expression comes back as a value and is right, but
    the statements of the inlined body (its loops, its assignments) land in the kernel instead: measured, a
    function summing ``a[e, k]`` over ``k`` in a loop returned its first term alone. This builds the inlined
    body with the builder of the callable being compiled, which is the kernel's own outside real functions.

    Returns whether the fix is in place (False where this Taichi's front end lacks what it replaces; the
    step kernel then inlines its stages instead of calling them, ``kernels/step.py``)."""
    try:
        from taichi.lang import impl, kernel_impl
        from taichi.lang.exception import TaichiSyntaxError
        call, tree_and_ctx = kernel_impl.Func.__call__, kernel_impl._get_tree_and_ctx
        transform, returned = kernel_impl.transform_tree, kernel_impl.ReturnStatus.ReturnedValue
    except (ImportError, AttributeError):
        return False
    if getattr(call, "_taichi_terra_inline", False):
        return True

    def __call__(self, *args, **kwargs):
        if self.is_real_function or self.pyfunc or not impl.inside_kernel():
            return call(self, *args, **kwargs)
        args = kernel_impl._process_args(self, args, kwargs)
        tree, ctx = tree_and_ctx(self, is_kernel=False, args=args,
                                 ast_builder=impl.get_runtime().compiling_callable.ast_builder(),
                                 is_real_function=False)
        ret = transform(tree, ctx)
        if self.return_type and ctx.returned != returned:
            raise TaichiSyntaxError("Function has a return type but does not have a return statement")
        return ret

    __call__._taichi_terra_inline = True
    kernel_impl.Func.__call__ = __call__
    return True


def builds_code(fn):
    """Mark ``fn`` as a function that kernel code calls while it is compiled to build its loads, stores and
    expressions from Python (Taichi's front end warns at every call of a plain Python function otherwise;
    the mark tells it that ``fn`` is meant for kernel code, and changes nothing else)."""
    fn._is_taichi_function = False
    return fn


def real_functions_work() -> bool:
    """Whether :func:`inline_into_real_functions` is installed."""
    from taichi.lang import kernel_impl

    return bool(getattr(kernel_impl.Func.__call__, "_taichi_terra_inline", False))


def _cache_sources() -> None:
    try:
        from taichi.lang import kernel_impl
        from taichi.lang.ast import checkers
    except ImportError:
        return
    for module in (kernel_impl, checkers):
        lines, source_file = getattr(module, "getsourcelines", None), getattr(module, "getsourcefile", None)
        if lines is None or source_file is None or getattr(lines, "_taichi_terra_cached", False):
            continue
        module.getsourcelines = _memo(lines)
        module.getsourcefile = _memo(source_file)
    wrap = getattr(kernel_impl, "textwrap", None)
    if wrap is not None and not getattr(wrap.fill, "_taichi_terra_cached", False):
        # kernel_impl re-wraps each source line with textwrap.fill(line, tabsize=4, width=9999), which only
        # expands tabs for lines as long as Python source lines are: the same text for the same line
        kernel_impl.textwrap = _FillCache(wrap)


def _memo(read):
    """``read(obj)`` remembered per function object (a module's source does not change while it runs)."""
    cache: dict = {}

    @functools.wraps(read)
    def cached(obj):
        key = getattr(obj, "__code__", None) or obj
        try:
            return cache[key]
        except (KeyError, TypeError):
            pass
        result = read(obj)
        try:
            cache[key] = result
        except TypeError:
            pass
        return result

    cached._taichi_terra_cached = True
    return cached


class _FillCache:
    """The ``textwrap`` module as ``kernel_impl`` sees it, with ``fill`` remembered per (line, options)."""

    def __init__(self, module):
        self._module = module
        self._cache: dict = {}

    def fill(self, text, **options):
        key = (text, tuple(sorted(options.items())))
        try:
            return self._cache[key]
        except KeyError:
            result = self._cache[key] = self._module.fill(text, **options)
            return result

    fill._taichi_terra_cached = True

    def __getattr__(self, name):
        return getattr(self._module, name)


def _short_source_positions() -> None:
    """Make Taichi's front end describe each source position without caret lines.

    While it turns a kernel's Python AST into IR, Taichi 1.7 formats a message for every statement and
    expression it visits (``ASTTransformerContext.get_pos_info``: file, line, the source lines and a line of
    carets under the node, each wrapped by ``textwrap`` to 80 columns), whether or not an error is ever
    reported. For the step kernel that is hundreds of thousands of wraps. Measured cold on a 2-core cpu, the
    step kernel of a world with one sphere compiled in 11.8 to 11.9 s with Taichi's formatting and in 9.8 to
    10.1 s with this one; the quadruped's, with the tree stages, in 36.0 and 31.7 s.
    """
    try:
        from taichi.lang.ast.ast_transformer_utils import ASTTransformerContext
    except ImportError:
        return
    original = _unpatched(ASTTransformerContext, "get_pos_info", "_taichi_terra_short")
    if original is None:
        return

    def get_pos_info(self, node):
        try:
            line = self.src[node.lineno - 1].rstrip()
            where = f'File "{self.file}", line {node.lineno + self.lineno_offset}, in {self.func.func.__name__}:'
        except (AttributeError, IndexError, TypeError):
            return original(self, node)
        return f"{where}\n{line}\n"

    get_pos_info._taichi_terra_short = True
    ASTTransformerContext.get_pos_info = get_pos_info


def _direct_matrix_ops() -> None:
    """Build Taichi's small vector and matrix operations inside a kernel as expressions, from Python.

    Each replaced operation computes the same terms in the same order as Taichi's own, with one difference:
    a product ``A @ x`` sums its terms starting from the first, where Taichi's starts from a zero it computes as
    ``A[0, 0] * x[0] * 0`` (with fast math off, as ``taichi_terra.init`` sets it, that zero is a multiply and an
    add per entry at run time). Outside a kernel, or for operands that are not tensor expressions of one or
    two dimensions, Taichi's own operation runs (it also reports shapes that do not match)."""
    try:
        from taichi.lang import impl, matrix_ops, ops
        from taichi.lang.expr import Expr
        from taichi.lang.matrix import make_matrix
    except ImportError:
        return
    names = ("matmul", "transpose", "dot", "cross", "outer_product", "sum", "norm_sqr", "norm", "_filled_vector",
             "_filled_matrix", "_identity_matrix")
    if any(not callable(getattr(matrix_ops, n, None)) for n in names):
        return
    if getattr(matrix_ops.matmul, "_taichi_terra_direct", False):
        return
    original = {n: getattr(matrix_ops, n) for n in names}

    def shape(x):
        if isinstance(x, Expr) and x.is_tensor() and impl.inside_kernel():
            dims = tuple(x.get_shape())
            if len(dims) in (1, 2):
                return dims
        return None

    def local(x):
        # (an operand is read entry by entry: as a local variable, as Taichi's functions take their arguments;
        # an expression indexed entry by entry is built again for every entry, and nested products grow
        # exponentially: the articulated step kernel then did not compile in 15 minutes)
        return impl.expr_init(x)

    def at(x, *index):
        return impl.subscript(None, x, *index)

    def total(terms):
        out = terms[0]
        for t in terms[1:]:
            out = out + t
        return out

    def matmul(x, y):
        sx, sy = shape(x), shape(y)
        if sx is None or sy is None:
            return original["matmul"](x, y)
        x, y = local(x), local(y)
        if len(sx) == 1 and len(sy) == 2 and sy[0] == sx[0]:  # x @ Y = Y^T x
            return make_matrix([total([at(y, k, j) * at(x, k) for k in range(sx[0])]) for j in range(sy[1])])
        if len(sx) == 2 and len(sy) == 1 and sx[1] == sy[0]:
            return make_matrix([total([at(x, i, k) * at(y, k) for k in range(sx[1])]) for i in range(sx[0])])
        if len(sx) == 2 and len(sy) == 2 and sx[1] == sy[0]:
            return make_matrix([[total([at(x, i, k) * at(y, k, j) for k in range(sx[1])]) for j in range(sy[1])]
                                for i in range(sx[0])])
        return original["matmul"](x, y)

    def transpose(x):
        sx = shape(x)
        if sx is None or len(sx) != 2:
            return original["transpose"](x)
        x = local(x)
        return make_matrix([[at(x, i, j) for i in range(sx[0])] for j in range(sx[1])])

    def elements(x, sx):
        if len(sx) == 1:
            return [at(x, i) for i in range(sx[0])]
        return [at(x, i, j) for i in range(sx[0]) for j in range(sx[1])]

    def sum_(x):
        sx = shape(x)
        if sx is None:
            return original["sum"](x)
        return total(elements(local(x), sx))

    def dot(x, y):
        sx, sy = shape(x), shape(y)
        if sx is None or sy != sx or len(sx) != 1:
            return original["dot"](x, y)
        x, y = local(x), local(y)
        return sum_(x * y)

    def norm_sqr(x):
        if shape(x) is None:
            return original["norm_sqr"](x)
        x = local(x)
        return sum_(x * x)

    def norm(x, eps=0.0):
        if shape(x) is None:
            return original["norm"](x, eps)
        return ops.sqrt(norm_sqr(x) + eps)

    def cross(x, y):
        sx, sy = shape(x), shape(y)
        if sx != sy or sx not in ((2,), (3,)):
            return original["cross"](x, y)
        x, y = local(x), local(y)
        if sx == (2,):
            return at(x, 0) * at(y, 1) - at(x, 1) * at(y, 0)
        return make_matrix([at(x, 1) * at(y, 2) - at(x, 2) * at(y, 1), at(x, 2) * at(y, 0) - at(x, 0) * at(y, 2),
                            at(x, 0) * at(y, 1) - at(x, 1) * at(y, 0)])

    def outer_product(x, y):
        sx, sy = shape(x), shape(y)
        if sx is None or sy is None or len(sx) != 1 or len(sy) != 1:
            return original["outer_product"](x, y)
        x, y = local(x), local(y)
        return make_matrix([[at(x, i) * at(y, j) for j in range(sy[0])] for i in range(sx[0])])

    def _filled_vector(n, dtype, val):
        if not impl.inside_kernel():
            return original["_filled_vector"](n, dtype, val)
        return make_matrix([val for _ in range(n)], dtype)

    def _filled_matrix(n, m, dtype, val):
        if not impl.inside_kernel():
            return original["_filled_matrix"](n, m, dtype, val)
        return make_matrix([[val for _ in range(m)] for _ in range(n)], dtype)

    def _identity_matrix(n, dtype):
        if not impl.inside_kernel():
            return original["_identity_matrix"](n, dtype)
        return make_matrix([[i == j for j in range(n)] for i in range(n)], dtype)

    for name, fn in (("matmul", matmul), ("transpose", transpose), ("dot", dot), ("cross", cross),
                     ("outer_product", outer_product), ("sum", sum_), ("norm_sqr", norm_sqr), ("norm", norm),
                     ("_filled_vector", _filled_vector), ("_filled_matrix", _filled_matrix),
                     ("_identity_matrix", _identity_matrix)):
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = original[name].__doc__
        fn._taichi_terra_direct = True
        setattr(matrix_ops, name, builds_code(fn))


def _direct_subscripts() -> None:
    """Build the commonest subscripts inside a kernel directly: an ndarray or a local vector or matrix indexed
    by integers and expressions (``a[e, k]``, ``m[i, j]``), with the same IR Taichi's ``subscript`` builds.

    Taichi's ``subscript`` serves every kind of value and index (fields, structs, slices, meshes, matrices as
    indices); before it builds the one expression it first flattens and checks the indices through generic
    helpers, which made it a quarter of the front end's time on the articulated step kernel (51k calls). The
    direct path takes the kinds above and hands everything else to Taichi's own; constant indices become the
    same 32-bit constants (negative ones go to Taichi's, which reports them)."""
    try:
        from taichi._lib import core
        from taichi.lang import impl
        from taichi.lang.any_array import AnyArray
        from taichi.lang.expr import Expr
    except ImportError:
        return
    original = _unpatched(impl, "subscript", "_taichi_terra_direct")
    if original is None:
        return
    if not all(hasattr(x, n) for x, n in ((core, "DebugInfo"), (core, "ExprGroup"), (impl, "get_runtime"))):
        return

    def subscript(ast_builder, value, *indices, skip_reordered=False):
        kind = type(value)
        if (kind is Expr or kind is AnyArray) and indices and not skip_reordered:
            for i in indices:
                k = type(i)
                if not (k is Expr or (k is int and i >= 0)):
                    break
            else:
                if kind is AnyArray or value.is_tensor():
                    runtime = impl.get_runtime()
                    group = core.ExprGroup()
                    for i in indices:
                        group.push_back(i.ptr if type(i) is Expr else Expr(i).ptr)
                    info = core.DebugInfo(runtime.get_current_src_info())
                    return Expr(runtime.compiling_callable.ast_builder().expr_subscript(value.ptr, group, info))
        return original(ast_builder, value, *indices, skip_reordered=skip_reordered)

    subscript.__doc__ = original.__doc__
    subscript._taichi_terra_direct = True
    impl.subscript = subscript


def _direct_expressions() -> None:
    """Wrap C++ expressions and make constants with less work per call, building the same IR.

    Every value the front end builds passes through ``Expr.__init__`` (265k calls for the quadruped's step
    kernel), which tests its argument against six kinds and looks the program's settings up again to type-check
    it; every integer or float literal through ``make_constant_expr``, which asks numpy for the integer type's
    range twice (``np.iinfo``). Here the commonest arguments (a C++ expression, another ``Expr``, a literal of
    type ``int`` or ``float``) take a direct path, the settings are looked up once per program and the ranges
    once per type; anything else goes to Taichi's own code, which also reports the errors."""
    try:
        import numpy as np
        from taichi._lib import core
        from taichi.lang import expr, impl
        from taichi.lang.util import to_numpy_type
        from taichi.types.primitive_types import integer_types, real_types
    except ImportError:
        return
    Expr = expr.Expr
    init, constant = Expr.__init__, getattr(expr, "make_constant_expr", None)
    if constant is None or getattr(init, "_taichi_terra_direct", False):
        return
    core_expr = core.Expr
    settings = [None, None]  # the program, its settings

    def checked(ptr):
        prog = impl.get_runtime().prog
        if prog is not settings[0]:
            settings[0], settings[1] = prog, prog.config()
        ptr.type_check(settings[1])

    def __init__(self, *args, dbg_info=None, dtype=None):
        if len(args) != 1:
            return init(self, *args, dbg_info=dbg_info, dtype=dtype)
        arg = args[0]
        kind = type(arg)
        done = False  # (whether the expression was type-checked already)
        if kind is core_expr:
            ptr = arg
        elif kind is Expr:  # (its own debug information, as Taichi's)
            ptr, done, dbg_info = arg.ptr, arg.ptr_type_checked, arg.dbg_info
        elif kind is int or kind is float:
            ptr = expr.make_constant_expr(arg, dtype).ptr
        else:
            return init(self, *args, dbg_info=dbg_info, dtype=dtype)
        self.dbg_info = dbg_info
        self.ptr = ptr
        if dbg_info:
            ptr.set_dbg_info(dbg_info)
        if not done:
            checked(ptr)
        self.ptr_type_checked = True

    ranges: dict = {}

    def make_constant_expr(val, dtype):
        kind = type(val)
        if kind is int:
            ty = impl.get_runtime().default_ip if dtype is None else dtype
            bounds = ranges.get(ty)
            if bounds is None and ty in integer_types:
                info = np.iinfo(to_numpy_type(ty))
                bounds = ranges[ty] = (int(info.min), int(info.max))
            if bounds is not None and bounds[0] <= val <= bounds[1]:
                if not -(1 << 63) <= val < (1 << 63):  # (an unsigned 64-bit value: its two's complement)
                    val -= 1 << 64
                return Expr(core.make_const_expr_int(ty, val))
        elif kind is float:
            ty = impl.get_runtime().default_fp if dtype is None else dtype
            if ty in real_types:
                return Expr(core.make_const_expr_fp(ty, val))
        return constant(val, dtype)

    __init__._taichi_terra_direct = True
    Expr.__init__ = __init__
    make_constant_expr.__doc__ = constant.__doc__
    expr.make_constant_expr = make_constant_expr


def _direct_dispatch() -> None:
    """Dispatch each AST node to its builder with less work per node, the same way.

    Taichi's ``Builder.__call__`` runs for every node of every inlined function (156k for the quadruped's step
    kernel): it looks the builder method up by a name it formats, tests the node's kind, and pushes the node's
    source position through a context-manager object made for the purpose. Here the method and the kind are
    remembered per node class and the position is pushed and popped directly. An error goes to Taichi's own
    ``__call__`` to be reported, through a stand-in builder that raises it again, so the message is Taichi's."""
    try:
        import ast

        from taichi.lang import impl
        from taichi.lang.ast import ast_transformer_utils
    except ImportError:
        return
    builder = getattr(ast_transformer_utils, "Builder", None)
    original = _unpatched(builder, "__call__", "_taichi_terra_direct")
    if original is None:
        return
    if not isinstance(getattr(impl.get_runtime(), "src_info_stack", None), list):
        return
    function = type(lambda: None)
    kinds: dict = {}  # (builder class, node class) -> (build method, whether the node has a source position)

    class Raiser:
        """Stands in for the builder when Taichi's ``__call__`` reports ``error`` for a node of ``kind``."""

        def __init__(self, error, kind):
            def build(ctx, node):
                raise error

            setattr(self, "build_" + kind.__name__, build)

    def __call__(self, ctx, node):
        key = (self.__class__, node.__class__)
        found = kinds.get(key)
        if found is None:
            method = getattr(self, "build_" + node.__class__.__name__, None)
            if not isinstance(method, function):  # (none, or a bound method: Taichi's own path)
                return original(self, ctx, node)
            found = kinds[key] = (method, isinstance(node, (ast.stmt, ast.expr)))
        method, positioned = found
        stack = impl.get_runtime().src_info_stack
        try:
            stack.append(ctx.get_pos_info(node) if positioned else "")
            try:
                return method(ctx, node)
            finally:
                stack.pop()
        except Exception as error:  # pylint: disable=broad-except
            return original(Raiser(error, node.__class__), ctx, node)

    __call__._taichi_terra_direct = True
    builder.__call__ = __call__
