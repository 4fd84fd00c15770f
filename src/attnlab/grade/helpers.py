"""Helper modules: the other ``.py`` files a student hands in beside a submission (``utils.py``),
importable by it inside the sandbox (``import utils``) and never graded as an exercise.

A helper is offered under its file's stem when that is a plain module name that shadows nothing
the sandbox needs (the standard library, NumPy, attnlab, torch, the submission itself). Its
imports are held to the submission's allow-list: statically here, for the helpers the
submission imports (directly or through another helper), and at run time inside the sandbox
for any helper that runs. A helper no one imports is never looked at, so a scratch file that
imports torch does not fail a right submission.
"""

from __future__ import annotations

import ast
import keyword
import sys
from pathlib import Path

RESERVED = {"submission", "numpy", "attnlab", "torch", "sitecustomize", "usercustomize"}
Helpers = dict[str, tuple[str, str]]  # module name -> (file name, source)


def module_name(path: Path) -> str | None:
    """The name ``path`` is importable as, or None (not a .py file, not an identifier, or a name
    that would shadow the standard library, NumPy or the harness)."""
    name = path.stem
    if path.suffix != ".py" or not name.isidentifier() or keyword.iskeyword(name):
        return None
    if name in RESERVED or name in sys.stdlib_module_names or name.startswith("_"):
        return None
    return name


def gather(files: list[tuple[Path, str]], graded: Path) -> Helpers:
    """{module name: (file name, source)} of ``files`` (path, source) usable as helpers of the
    file ``graded``: every other readable .py file with a usable module name."""
    found: Helpers = {}
    for path, source in files:
        name = module_name(path)
        if path != graded and name is not None and name != graded.stem:
            found.setdefault(name, (path.name, source))
    return found


def imported(source: str, helpers: Helpers) -> list[str]:
    """The helpers ``source`` imports, directly or through other helpers (by ``import`` and
    ``from ... import``, at any depth of the code), in the order first met."""
    seen: list[str] = []
    todo = [source]
    while todo:
        for name in _imports(todo.pop()):
            if name in helpers and name not in seen:
                seen.append(name)
                todo.append(helpers[name][1])
    return seen


def _imports(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # a helper that does not parse fails where it is imported, in the sandbox
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return names


def note(helpers: Helpers, used: list[str]) -> str:
    """The report's line about the helpers: which the submission imported, which it could have."""
    files = ", ".join(f"{helpers[n][0]} (import {n})" for n in used)
    rest = [helpers[n][0] for n in helpers if n not in used]
    parts = [f"helper modules used: {files}"] if used else []
    if rest:
        parts.append("importable, not imported: " + ", ".join(rest))
    return "; ".join(parts)
