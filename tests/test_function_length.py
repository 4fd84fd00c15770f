"""Every function in attnlab fits on a screen: at most 80 lines, decorators and docstring included.

The source is read with ``ast``, so methods, nested functions and lambdas' enclosing functions
all count; a long function is named with its file and line so it can be split.
"""

from __future__ import annotations

import ast
from pathlib import Path

import attnlab

SRC = Path(attnlab.__file__).parent
LIMIT = 80


def long_functions(source: str, limit: int = LIMIT) -> list[tuple[str, int, int]]:
    """(name, first line, length) of each function in ``source`` longer than ``limit`` lines."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            length = node.end_lineno - first + 1
            if length > limit:
                found.append((node.name, first, length))
    return found


def test_counter_sees_a_long_method_and_a_nested_function():
    # counted by hand: a method of 82 lines with its decorator (lines 2-83), a function of 84
    # (84-167) holding a nested one of 82 (85-166), and a short one
    body80 = "".join(f"        x{i} = {i}\n" for i in range(80))
    nested = "".join(f"        y{i} = {i}\n" for i in range(81))
    source = (
        f"class A:\n    @staticmethod\n    def m():\n{body80[:-1]}\n"
        f"def outer():\n    def inner():\n{nested}    return inner\n"
        "def short():\n    return 1\n"
    )
    found = {name: (line, length) for name, line, length in long_functions(source)}
    assert found == {"m": (2, 82), "outer": (84, 84), "inner": (85, 82)}
    assert long_functions("def f():\n" + "    pass\n" * 79) == []  # 80 lines: allowed


def test_no_function_in_attnlab_is_over_80_lines():
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 50  # the walk found the package, not an empty folder
    over = [
        f"{path.relative_to(SRC.parent)}:{line} {name} ({length} lines)"
        for path in files
        for name, line, length in long_functions(path.read_text(encoding="utf-8"))
    ]
    assert not over, "functions over 80 lines:\n" + "\n".join(over)
