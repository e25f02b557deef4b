"""The package's layout: no two modules of pbf/ import each other (counting imports inside functions,
which only hide a circle), and no module grows past a size one reader can hold."""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pbf"

#: the most lines a module of pbf/ may have
MAX_LINES = 650


def _modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package by dotted name: (its file, whether it is a package's __init__)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        out[".".join(parts)] = (path, is_package)
    return out


def _run_time_nodes(tree: ast.AST):
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:`` (imports for annotations only)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in [child, *_run_time_nodes(child)])
            continue
        yield node
        yield from _run_time_nodes(node)


def _imported(name: str, path: Path, is_package: bool, modules: dict) -> set[str]:
    """The modules of pbf that ``name`` imports anywhere in its file (at module level or in a function;
    not under ``if TYPE_CHECKING:``, which annotations alone need). ``from X import y`` counts as
    importing X.y when that is a module, else X."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    out = set()
    for node in _run_time_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                if f"{source}.{alias.name}" in modules:
                    out.add(f"{source}.{alias.name}")
                elif source in modules:
                    out.add(source)
    out.discard(name)
    return out


def _import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imported(name, path, is_package, modules) for name, (path, is_package) in modules.items()}


def test_the_import_graph_sees_imports_at_any_depth():
    graph = _import_graph()
    assert "pbf.errors" in graph["pbf.cluster"]                    # module level
    assert "pbf.plugins.choosers" in graph["pbf.config"]           # inside a method
    assert "pbf.errors" in graph["pbf.workload.sacct"]             # from .. (a subpackage)
    assert "pbf.workload" in graph["pbf.sweep_cell"]               # from a package's __init__
    assert "pbf.workload.cleaning" not in graph["pbf.workload.jobs"]  # for annotations only


def test_no_two_modules_import_each_other():
    graph = _import_graph()
    circles = sorted({tuple(sorted((a, b))) for a, targets in graph.items() for b in targets if a in graph[b]})
    assert not circles, ("modules that import each other (move what both need into a module of its own): "
                         + ", ".join(f"{a} <-> {b}" for a, b in circles))


def test_modules_stay_short():
    lines = {str(p.relative_to(PACKAGE.parent)): len(p.read_text().splitlines()) for p in sorted(PACKAGE.rglob("*.py"))}
    long = [f"{name} ({n} lines)" for name, n in lines.items() if n > MAX_LINES]
    assert not long, f"modules over {MAX_LINES} lines (split them by concern): {', '.join(long)}"
