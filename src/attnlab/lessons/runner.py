"""Running a lesson's cells: one namespace, the code exactly as shown, its printing captured.

``code_of`` gives a cell's code as the learner sees it (the setup cell with the chosen SEED, LANG
and any overridden constant such as STEPS; the comments in the learner's language);
``Session.run`` executes exactly that text and returns what it printed and what it
assigned. The terminal lesson, the checks and the exporters all go through here, so they show
and run the same code.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import re
from contextlib import nullcontext, redirect_stdout
from dataclasses import dataclass, field

from ..errors import UserError
from . import comments, source
from .show import plotting

Overrides = dict[str, object]


def code_of(
    cell: source.SourceCell,
    seed: int = 0,
    lang: str = "en",
    overrides: Overrides | None = None,
    number: int | None = None,
) -> str:
    """The cell's code as shown and run: the setup cell carries this run's SEED, LANG and
    ``overrides`` (``{"STEPS": 5}`` replaces the line ``STEPS = ...``); with ``number``,
    the comments are in ``lang`` where lesson ``number``'s catalogue has them."""
    code = cell.code
    if cell.kind == "setup":
        values = {**(overrides or {}), "SEED": seed, "LANG": lang}
        for name, value in values.items():
            line = re.compile(rf"^{re.escape(name)} = [^#\n]*?(\s*#.*)?$", re.M)
            if not line.search(code) and name not in ("SEED", "LANG"):
                raise UserError(f"this lesson's setup has no constant {name} to set")
            code = line.sub(
                lambda m, n=name, v=value: f"{n} = {_literal(v)}{m.group(1) or ''}", code
            )
    return code if number is None else comments.translate(code, number, lang)


def _literal(value: object) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)


# setup constants a check passes on, so that it runs what the learner ran: the training steps
# of a lesson that trains, and the lengths a timing exercise times
TUNABLE = ("STEPS", "TIMED")


def setup_constants(number: int) -> set[str]:
    """The UPPER_CASE names lesson ``number``'s setup cell assigns (SEED, LANG, STEPS, ...)."""
    setup = [c.code for c in source.cells(number) if c.kind == "setup"]
    return set(re.findall(r"^([A-Z][A-Z0-9_]*) = ", "\n".join(setup), flags=re.M))


def tunable(number: int) -> list[str]:
    """The constants of ``TUNABLE`` that lesson ``number``'s setup cell sets."""
    return [name for name in TUNABLE if name in setup_constants(number)]


def read_by(number: int, cell: source.SourceCell) -> list[str]:
    """The constants of ``tunable(number)`` that exercise ``cell``'s check computes with: those
    its versions, or the steps they need, mention."""
    cells = versions(number, cell)
    code = [c.code for c in (*cells, *steps(number)[: needed_steps(number, cells)])]
    mentioned = set().union(*map(_names, code))
    return [name for name in tunable(number) if name in mentioned]


def check_code(number: int, cell: source.SourceCell) -> str:
    """The code of the cell that checks an exercise (shown and run after the learner's cell)."""
    if "grade" in cell.options:
        return f"print(check({cell.options['grade']}, seed=SEED, lang=LANG))"
    answer = cell.options["answer"]
    names = read_by(number, cell)
    extra = ", overrides={" + ", ".join(f'"{n}": {n}' for n in names) + "}" if names else ""
    return f'print(check_answer({number}, "{cell.id}", {answer}, seed=SEED, lang=LANG{extra}))'


@dataclass
class Session:
    """One lesson's namespace; cells run in it one after another, as in a notebook."""

    number: int
    seed: int = 0
    lang: str = "en"
    ns: dict = field(default_factory=lambda: {"__name__": "__main__"})
    overrides: Overrides = field(default_factory=dict)
    # each step's text as filled where the step ran (step id -> text): an export made from
    # this run (``notebooks.build(..., ran=session)``) shows these, running nothing again
    said: dict[str, str] = field(default_factory=dict)

    def run(self, code: str, name: str, quiet: bool = False) -> tuple[str, dict]:
        """Execute ``code``; return (what it printed, the names it assigned or changed)."""
        before = {k: id(v) for k, v in self.ns.items()}
        buf = io.StringIO()
        with redirect_stdout(buf), plotting(quiet=True) if quiet else nullcontext():
            exec(compile(code, f"<lesson {self.number}: {name}>", "exec"), self.ns)
        changed = {
            k: v
            for k, v in self.ns.items()
            if not k.startswith("__") and before.get(k) != id(v) and not _is_module(v)
        }
        return buf.getvalue(), changed

    def fork(self) -> Session:
        """A session that goes on from this one's state without changing it (a shallow copy
        of the namespace: a cell that rebinds names leaves the original alone)."""
        return Session(self.number, self.seed, self.lang, dict(self.ns), self.overrides)

    def code(self, cell: source.SourceCell) -> str:
        """``cell``'s code as this session shows and runs it."""
        return code_of(cell, self.seed, self.lang, self.overrides, self.number)

    def run_cell(self, cell: source.SourceCell, quiet: bool = False) -> tuple[str, dict]:
        return self.run(self.code(cell), cell.id or cell.kind, quiet)

    def steps(self, upto: int | None = None) -> None:
        """Run setup and the steps (the first ``upto`` of them) silently."""
        k = 0
        for cell in source.cells(self.number):
            if cell.kind == "step":
                k += 1
                if upto is not None and k > upto:
                    return
            if cell.kind in ("setup", "step"):
                self.run_cell(cell, quiet=True)


def needed_steps(number: int, cells: list[source.SourceCell], also: set[str] = frozenset()) -> int:
    """How many of lesson ``number``'s steps must run before ``cells`` (an exercise's
    versions) can: up to the last step that mentions a name the cells mention, leaving out
    builtins and what setup binds and no step binds again (modules, constants such as SEED).
    An exercise built only on setup and its own inputs needs no step, so checking it never
    re-runs the lesson's training. ``also``: more names needed (a text's placeholders)."""
    setup = [c for c in source.cells(number) if c.kind == "setup"]
    rebound = set().union(*(_bound(s.code) for s in steps(number)))
    fixed = set().union(*(_bound(c.code) for c in setup)) - rebound
    wanted = set().union(also, *(_names(c.code) for c in cells)) - fixed - set(dir(builtins))
    mentions = [k for k, s in enumerate(steps(number), 1) if _names(s.code) & wanted]
    return max(mentions, default=0)


def _names(code: str) -> set[str]:
    """Every name the code mentions (read, bound or deleted), less the variables of its
    comprehensions, which live only inside them."""
    tree = ast.parse(code)
    local = {
        n.id
        for c in ast.walk(tree)
        if isinstance(c, ast.comprehension)
        for n in ast.walk(c.target)
        if isinstance(n, ast.Name)
    }
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - local


def _bound(code: str) -> set[str]:
    """The names the code binds: assignments, imports, definitions, loop targets."""
    found = set()
    for n in ast.walk(ast.parse(code)):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            found.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            found.add(n.name)
    return found


def _is_module(v) -> bool:
    return type(v).__name__ == "module"


def exercises(number: int) -> list[source.SourceCell]:
    return [c for c in source.cells(number) if c.kind == "exercise"]


def steps(number: int) -> list[source.SourceCell]:
    return [c for c in source.cells(number) if c.kind == "step"]


def part(number: int, kind: str, ident: str) -> list[source.SourceCell]:
    """The ``kind`` cells (solution, mistake) of exercise ``ident``."""
    return [c for c in source.cells(number) if c.kind == kind and c.id == ident]


def versions(number: int, exercise: source.SourceCell) -> list[source.SourceCell]:
    """An exercise's cells: its starting code, its worked answer, then its known mistakes."""
    ident = exercise.id
    return [exercise, *part(number, "solution", ident), *part(number, "mistake", ident)]


__all__ = ["Session", "check_code", "code_of", "exercises", "needed_steps", "part", "steps"]
__all__ += ["read_by", "setup_constants", "tunable", "versions"]
