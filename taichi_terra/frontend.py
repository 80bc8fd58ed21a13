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

Both are installed once, and only where Taichi's front end has the functions with the attributes they read;
other Taichi versions keep their own.
"""
from __future__ import annotations

import functools


def speed_up() -> None:
    """Install the source cache and the short source positions (idempotent)."""
    _cache_sources()
    _short_source_positions()


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
    original = getattr(ASTTransformerContext, "get_pos_info", None)
    if original is None or getattr(original, "_taichi_terra_short", False):
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
