"""What grading produces: one check's result and one submission's report (the data types every
other grading module imports). Data only: how a report reads (``view``) is imported where it is
shown, never at import time, so presentation can change without touching the data."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import __version__


@dataclass
class CheckResult:
    name: str
    passed: bool
    message: str = ""
    scored: bool = True  # False for the gate checks (parsing, imports), and for "inputs left
    # unchanged" when the function never answered: an untouched starter scores 0
    points: float = 1.0  # what passing it is worth (a teacher's exercise sets points per check)


@dataclass
class Report:
    exercise: str
    passed: bool
    score: float
    checks: list[CheckResult]
    mistakes: list[str]
    file: str = ""
    seed: int | None = None
    hints: dict[str, str] = field(default_factory=dict)
    isolation: str = ""  # "bwrap" or "process": how the submission was isolated
    shown: dict | None = None  # the smallest failing case's weights: {case, name, got, expected}
    output: str = ""  # what the submission printed (trimmed)
    error: str | None = None  # an internal grader error: no verdict on the submission
    lang: str = "en"  # the language of the hints, and of str() and the HTML view
    lines: dict[str, list[int]] = field(default_factory=dict)  # named id -> its 1-based lines
    version: str = __version__  # the attnlab that graded it (with the seed: what repeats it)
    notes: list[str] = field(default_factory=list)  # about the hand-in: the files ignored
    source: str = ""  # the graded code, to quote the lines (not in to_dict's JSON)
    points: float = 0.0  # the points of the scored checks passed ...
    max_points: float = 0.0  # ... of these: score = points / max_points

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("source")
        return d

    def __str__(self) -> str:
        """``attnlab grade``'s text (on a terminal, its long lines broken to its width)."""
        from .view import for_terminal, text

        return for_terminal(text(self))

    def _repr_html_(self) -> str:
        """Jupyter's view: the verdict, the failed checks and the hints, every text escaped."""
        from .view import report_html

        return report_html(self)


def student_of(file: str) -> str:
    """The student a class-mode report belongs to: its subfolder, or the file's own name."""
    path = Path(file)
    return path.parts[0] if len(path.parts) > 1 else path.stem
