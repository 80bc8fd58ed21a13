"""No import cycles in the package or in perf/: every ``import`` and ``from ... import`` of one of their own
modules, at any depth of a file (a function-level import hides a cycle from Python, not from a reader), is an
edge of a graph whose strongly connected components must all be single modules."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> dict:
    """Dotted name -> file, for taichi_terra/ and perf/ (a package is its ``__init__``)."""
    out = {}
    for package in ("taichi_terra", "perf"):
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _imported(name: str, path: Path, node, modules: dict) -> set:
    """The modules of ``modules`` that import statement ``node`` in module ``name`` (file ``path``) loads."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in modules}
    base = name.split(".")
    if node.level:
        if path.name != "__init__.py":
            base = base[:-1]
        base = base[:len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    found = set()
    for alias in node.names:
        child = f"{prefix}.{alias.name}"
        found.add(child if child in modules else prefix)
    return found & set(modules)


def _cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_module_of_the_package_or_perf_imports_itself_through_others():
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= _imported(name, path, node, modules)
        edges.discard(name)
        graph[name] = edges
    assert len(graph) > 100  # (both trees were read)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
