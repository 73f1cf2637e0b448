"""The package's layout rules: no import cycle between autovend's modules, and no module over 500 lines.

The cycle check walks each module's imports with `ast`: those at module level (imports under `if TYPE_CHECKING:`
count, since they still tie the two modules together), and in a second check the lazy ones inside functions too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import autovend

PACKAGE = Path(autovend.__file__).parent
MAX_LINES = 500
# Modules allowed over MAX_LINES, each with its current length; the list may only shrink (it is empty now).
TOO_LONG_FOR_NOW: dict[str, int] = {}


def _module_files(root: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package's __init__) for every .py file under `root`."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def _statements(body: list[ast.stmt], lazy: bool):
    """The statements executed at import (the module body and its if/try/with/class blocks); with `lazy`, also
    those in function bodies."""
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and not lazy:
            continue
        yield stmt
        for name in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(stmt, name, None)
            if isinstance(block, list):
                yield from _statements(block, lazy)


def import_graph(root: Path, lazy: bool = False) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports at module level, or anywhere with `lazy`.

    `from p import m` names the module p.m when there is one, else p.
    """
    modules = _module_files(root)
    top = root.name
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        targets: set[str] = set()
        for stmt in _statements(ast.parse(path.read_text(encoding="utf-8")).body, lazy):
            if isinstance(stmt, ast.Import):
                targets.update(alias.name for alias in stmt.names)
            elif isinstance(stmt, ast.ImportFrom):
                if stmt.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - stmt.level + 1]
                    origin = ".".join([*base, stmt.module] if stmt.module else base)
                else:
                    origin = stmt.module or ""
                for alias in stmt.names:
                    sub = f"{origin}.{alias.name}"
                    targets.add(sub if sub in modules else origin)
        graph[name] = {t for t in targets if t.split(".")[0] == top and t in modules and t != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (each one holds an import cycle)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root / "pkg"


def test_the_walker_finds_a_type_only_cycle_and_ignores_lazy_imports(tmp_path):
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n",
            "pkg/b.py": "from pkg import a\n",
            "pkg/c.py": "def f():\n    from pkg import d\n",
            "pkg/d.py": "from . import c\n",
        },
    )
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.a"}
    assert graph["pkg.c"] == set()  # the import inside f() is lazy
    assert graph["pkg.d"] == {"pkg.c"}  # relative import resolved
    assert import_cycles(graph) == [["pkg.a", "pkg.b"]]
    assert import_graph(pkg, lazy=True)["pkg.c"] == {"pkg.d"}
    assert import_cycles(import_graph(pkg, lazy=True)) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d"]]


def test_the_walker_finds_a_three_module_cycle_through_a_subpackage(tmp_path):
    pkg = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "from pkg.sub.y import Y\n",
            "pkg/sub/y.py": "import pkg.z\n",
            "pkg/z.py": "from pkg import sub\n",
        },
    )
    assert import_cycles(import_graph(pkg)) == [["pkg.sub", "pkg.sub.y", "pkg.z"]]


@pytest.mark.parametrize("lazy", [False, True], ids=["module-level", "with-lazy-imports"])
def test_autovend_has_no_import_cycle(lazy):
    graph = import_graph(PACKAGE, lazy=lazy)
    assert len(graph) > 150  # the walker saw the whole package
    cycles = import_cycles(graph)
    detail = [{m: sorted(graph[m] & set(c)) for m in c} for c in cycles]
    assert cycles == [], f"import cycles (module -> the cycle's modules it imports): {detail}"


def test_no_module_is_over_500_lines_but_the_listed_ones_and_those_do_not_grow():
    sizes = {
        str(path.relative_to(PACKAGE.parent)): len(path.read_text(encoding="utf-8").splitlines())
        for path, _ in _module_files(PACKAGE).values()
    }
    assert len(sizes) > 150
    too_long = {name: n for name, n in sorted(sizes.items()) if n > TOO_LONG_FOR_NOW.get(name, MAX_LINES)}
    assert too_long == {}, f"split these modules along their seams (at most {MAX_LINES} lines each): {too_long}"
