"""Running a lesson's cells: one namespace, the code exactly as shown, its printing captured.

``code_of`` gives a cell's code as the learner sees it (the setup cell with the chosen SEED and
LANG); ``Session.run`` executes exactly that text and returns what it printed and what it
assigned. The terminal lesson, the checks and the exporters all go through here, so they show
and run the same code.
"""

from __future__ import annotations

import io
import re
from contextlib import nullcontext, redirect_stdout
from dataclasses import dataclass, field

from . import source
from .show import plotting


def code_of(cell: source.Cell, seed: int = 0, lang: str = "en") -> str:
    """The cell's code as shown and run: the setup cell carries this run's SEED and LANG."""
    if cell.kind != "setup":
        return cell.code
    code = re.sub(r"^SEED = .*$", f"SEED = {seed}", cell.code, flags=re.M)
    return re.sub(r"^LANG = .*$", f'LANG = "{lang}"', code, flags=re.M)


def check_code(number: int, cell: source.Cell) -> str:
    """The code of the cell that checks an exercise (shown and run after the learner's cell)."""
    if "grade" in cell.options:
        return f"print(check({cell.options['grade']}, seed=SEED, lang=LANG))"
    answer = cell.options["answer"]
    return f'print(check_answer({number}, "{cell.id}", {answer}, seed=SEED, lang=LANG))'


@dataclass
class Session:
    """One lesson's namespace; cells run in it one after another, as in a notebook."""

    number: int
    seed: int = 0
    lang: str = "en"
    ns: dict = field(default_factory=lambda: {"__name__": "__main__"})

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
        return Session(self.number, self.seed, self.lang, ns=dict(self.ns))

    def run_cell(self, cell: source.Cell, quiet: bool = False) -> tuple[str, dict]:
        return self.run(code_of(cell, self.seed, self.lang), cell.id or cell.kind, quiet)

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


def _is_module(v) -> bool:
    return type(v).__name__ == "module"


def exercises(number: int) -> list[source.Cell]:
    return [c for c in source.cells(number) if c.kind == "exercise"]


def steps(number: int) -> list[source.Cell]:
    return [c for c in source.cells(number) if c.kind == "step"]


def part(number: int, kind: str, ident: str) -> list[source.Cell]:
    """The ``kind`` cells (solution, mistake) of exercise ``ident``."""
    return [c for c in source.cells(number) if c.kind == kind and c.id == ident]


__all__ = ["Session", "check_code", "code_of", "exercises", "part", "steps"]
