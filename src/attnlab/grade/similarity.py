"""How alike two students' files are, once the differences that hide copying are taken out.

Each file is normalised with ``ast``: comments go (the parser drops them), docstrings go, and
every name the file uses that is not a builtin becomes ``v0``, ``v1``, ... in order of first
use (so renaming variables, functions or an import alias changes nothing; attribute names such
as ``np.exp`` and the literal numbers stay). The files' token sequences are then compared with
``difflib.SequenceMatcher`` (the standard library): a ratio of 1.0 is the same program up to
names, comments and docstrings. Code every student starts from (the starter file) counts as
shared: choose the threshold with that in mind. Files that do not parse are left out.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import io
import itertools
import tokenize
from dataclasses import dataclass

from .results import Report, student_of

BUILTINS = set(dir(builtins))


class _Rename(ast.NodeTransformer):
    """Names to ``v0``, ``v1``, ... by first use; builtins and attribute names kept."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _new(self, name: str) -> str:
        if name in BUILTINS:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self._new(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self._new(node.arg)
        node.annotation = None
        return node

    def visit_alias(self, node: ast.alias) -> ast.alias:
        node.asname = self._new(node.asname or node.name.split(".")[0])
        return node

    def _function(self, node):
        node.name = self._new(node.name)
        _drop_docstring(node)
        node.returns = None
        self.generic_visit(node)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        node.name = self._new(node.name)
        _drop_docstring(node)
        self.generic_visit(node)
        return node


def _drop_docstring(node) -> None:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]


def tokens(source: str) -> list[str] | None:
    """The normalised token sequence of ``source``, or None when it does not parse."""
    try:
        tree = ast.parse(source)
        _drop_docstring(tree)
        code = ast.unparse(_Rename().visit(tree))
        toks = tokenize.generate_tokens(io.StringIO(code).readline)
        skip = {tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
        return [t.string for t in toks if t.type not in skip]
    except (SyntaxError, ValueError, RecursionError, MemoryError, tokenize.TokenError):
        return None


def ratio(a: list[str], b: list[str]) -> float:
    """SequenceMatcher's similarity of two token sequences (1.0: the same)."""
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


@dataclass
class Pair:
    exercise: str
    a: str
    b: str
    ratio: float


def similar_pairs(reports: list[Report], threshold: float) -> list[Pair]:
    """Pairs of files from different students graded for the same exercise whose normalised
    tokens agree at least ``threshold``, most alike first (the code each report graded)."""
    by_exercise: dict[str, list[tuple[str, list[str]]]] = {}
    for r in reports:
        toks = tokens(r.source)
        if toks:
            by_exercise.setdefault(r.exercise, []).append((r.file, toks))
    found = []
    for ex, files in by_exercise.items():
        for (fa, ta), (fb, tb) in itertools.combinations(sorted(files), 2):
            if student_of(fa) == student_of(fb):
                continue  # one student's own attempts
            quick = difflib.SequenceMatcher(None, ta, tb, autojunk=False).real_quick_ratio()
            if quick < threshold:
                continue
            r = ratio(ta, tb)
            if r >= threshold:
                found.append(Pair(ex, fa, fb, r))
    return sorted(found, key=lambda p: (-p.ratio, p.exercise, p.a, p.b))


def table(pairs: list[Pair], threshold: float) -> str:
    """The pairs as lines for the teacher (file names escaped)."""
    from .view import shown_name

    head = f"similar files (normalised tokens, ratio >= {threshold:g}): {len(pairs)}"
    rows = [f"  {p.ratio:.3f}  {p.exercise}: {shown_name(p.a)} ~ {shown_name(p.b)}" for p in pairs]
    return "\n".join([head, *rows])
