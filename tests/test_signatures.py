"""No function of the package takes more than ``MAX_PARAMETERS`` parameters: where a long list grew, the
values that travel together are a struct (a Taichi dataclass such as ``collision.narrowphase.Shape``, a
bundle of arrays such as ``StepData``, a Python dataclass such as ``model.ModelParts``). Counted on the
source (AST), ``self`` and ``cls`` left out, ``*args`` and ``**kwargs`` one each.

Exempt are the arrays a compiled unit binds: a ``@ti.kernel``'s parameters, and a ``@ti.real_func``'s
``ndarray`` parameters (a compiled function is called with the kernel's arrays one by one; it cannot take a
bundle); a real function's other parameters count."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_PARAMETERS = 10


def _decorators(node) -> set:
    return {ast.unparse(d).split("(")[0] for d in node.decorator_list}


def _counted(node) -> list:
    """The names of the parameters of function ``node`` that count."""
    a = node.args
    params = a.posonlyargs + a.args + a.kwonlyargs
    names = [p.arg for p in params]
    if names and names[0] in ("self", "cls"):
        params, names = params[1:], names[1:]
    if "ti.real_func" in _decorators(node):  # (its arrays, annotated ``nd`` or ``ti.types.ndarray()``, are bound)
        names = [p.arg for p in params if not (p.annotation is not None and "nd" in ast.unparse(p.annotation))]
    names += [f"*{a.vararg.arg}"] if a.vararg else []
    names += [f"**{a.kwarg.arg}"] if a.kwarg else []
    return names


def _long_signatures(root: Path) -> list:
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "ti.kernel" not in _decorators(node):
                names = _counted(node)
                if len(names) > MAX_PARAMETERS:
                    out.append(f"{path.relative_to(root)}:{node.lineno} {node.name} takes {len(names)}")
    return out


def test_no_function_of_the_package_takes_more_than_ten_parameters():
    assert _long_signatures(ROOT / "taichi_terra") == []


def test_the_scan_finds_a_long_signature(tmp_path):
    """The scan itself: it counts plain, keyword-only and starred parameters, leaves out ``self``, exempts a
    kernel, and counts a real function's non-array parameters."""
    src = tmp_path / "m.py"
    src.write_text(
        "import taichi as ti\n"
        "def f(a, b, c, d, e, f, g, h, i, j, k): pass\n"
        "def ok(a, b, c, d, e, f, g, h, i, j): pass\n"
        "def starred(a, b, c, d, e, f, g, h, i, *rest, **more): pass\n"
        "class C:\n"
        "    def m(self, a, b, c, d, e, f, g, h, i, j): pass\n"
        "@ti.kernel\n"
        "def k(a, b, c, d, e, f, g, h, i, j, k): pass\n"
        "@ti.real_func\n"
        "def r(a: nd, b: nd, c: nd, d: nd, e: nd, f: nd, g: nd, h: nd, i: nd, j: nd, k: ti.i32) -> ti.i32: pass\n"
        "@ti.real_func\n"
        "def r2(a: ti.i32, b: ti.i32, c: ti.i32, d: ti.i32, e: ti.i32, f: ti.i32, g: ti.i32, h: ti.i32,\n"
        "       i: ti.i32, j: ti.i32, k: ti.i32) -> ti.i32: pass\n")
    found = [line.split()[1] for line in _long_signatures(tmp_path)]
    assert found == ["f", "starred", "r2"]
