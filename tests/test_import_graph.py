"""No import circles in attnlab: not between its packages, not between the modules of one.

The graph is read from the source (ast), so it holds every import, also those inside functions
(a lazy import still ties two packages together). ``from pkg import sub`` ties a module to the
submodule ``pkg.sub`` only; ``from pkg import name`` to ``pkg`` (its ``__init__``).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import attnlab

SRC = Path(attnlab.__file__).parent
# Circles known and being removed on another branch; remove an entry once that branch is merged.
KNOWN: list[list[str]] = []  # circles allowed for now: none


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The attnlab modules that ``name`` (at ``path``) imports anywhere in its source."""
    package = name if is_package(path) else name.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {  # `if TYPE_CHECKING:` blocks never run: annotations, not imports
        id(n) for t in ast.walk(tree) if _is_type_checking(t) for b in t.body for n in ast.walk(b)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[: len(base) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{target}.{a.name}"
                found.add(sub if sub in known else target)
    return {m for m in found if m in known}


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


@functools.cache  # read once: both tests below walk the same graph (callers only read it)
def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in SRC.rglob("*.py")}
    known = set(files)
    return {name: imports(path, name, known) - {name} for name, path in files.items()}


def unit(module: str) -> str:
    """The package (or top-level module) of attnlab that ``module`` belongs to."""
    return ".".join(module.split(".")[:2])


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return groups


def test_packages_do_not_import_each_other_in_a_circle():
    between: dict[str, set[str]] = {}
    for a, targets in graph().items():
        between.setdefault(unit(a), set()).update(unit(b) for b in targets if unit(b) != unit(a))
    assert circles(between) == []


def test_modules_of_one_package_do_not_import_each_other_in_a_circle():
    inside: dict[str, dict[str, set[str]]] = {}
    for a, targets in graph().items():
        inside.setdefault(unit(a), {})[a] = {b for b in targets if unit(b) == unit(a)}
    found = [c for edges in inside.values() for c in circles(edges) if c not in KNOWN]
    assert found == []


def test_the_circle_finder_finds_a_circle_through_a_lazy_import(tmp_path):
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(edges) == [["a", "b", "c"]]
    src = tmp_path / "attnlab" / "x.py"
    src.parent.mkdir()
    src.write_text("def f():\n    from .y import g\n    from . import z, VERSION\n")
    found = imports(src, "attnlab.x", {"attnlab.y", "attnlab.z", "attnlab"})
    assert found == {"attnlab.y", "attnlab.z", "attnlab"}
