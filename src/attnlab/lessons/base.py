"""The shape of a lesson: sections that compute and print, exercises, and a quiz.

Every number a lesson prints is computed when it runs, by ``attnlab.ref`` / ``attnlab.nn``.
Text comes in English and Japanese side by side (``ctx.say(en=..., ja=...)``), so both
languages always show the same numbers. Each section draws its random numbers from its own
generator, seeded by (seed, lesson, section), so ``--section K`` prints exactly what the full
run prints for section K.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from ..i18n import Text
from ..tables import text_table

EXERCISE_BASE = 100


@dataclass
class Context:
    """What a running section may use: the language, its generator, the output and plot folder."""

    lang: str = "en"
    seed: int = 0
    out: TextIO = field(default_factory=lambda: sys.stdout)
    plots: Path | None = None
    lesson: int = 0
    part: int = 0  # section k, or EXERCISE_BASE + k for exercise k
    written: list[Path] = field(default_factory=list)

    def say(self, en: str, ja: str | None = None) -> None:
        """Print the text in the lesson's language (``ja`` defaults to ``en`` for pure numbers)."""
        print(ja if self.lang == "ja" and ja is not None else en, file=self.out)

    def t(self, en: str, ja: str) -> str:
        return ja if self.lang == "ja" else en

    def rng(self, stream: int = 0, section: int | None = None) -> np.random.Generator:
        """This part's generator; ``section=k`` gives section k's (to reuse its inputs)."""
        part = self.part if section is None else section
        return np.random.default_rng([self.seed, self.lesson, part, stream])

    def plot(self, name: str, draw: Callable[[], object]) -> None:
        """With ``--plots DIR``, draw a figure and save it as ``DIR/name.png``."""
        if self.plots is None:
            return
        from ..viz import save

        path = save(draw(), self.plots / f"{name}.png")
        self.written.append(path)
        self.say(f"  [plot] {path}", f"  [図] {path}")


@dataclass(frozen=True)
class Step:
    """A section or an exercise: a title and a function that computes and prints."""

    title: Text
    run: Callable[[Context], dict | None]


@dataclass(frozen=True)
class Question:
    question: Text
    answer: Text


@dataclass(frozen=True)
class Lesson:
    number: int
    title: Text
    summary: Text
    source: str  # the course file it follows
    intro: Text
    sections: Sequence[Step]
    exercises: Sequence[Step] = ()
    quiz: Sequence[Question] = ()
    outro: Text | None = None


# ---- formatting helpers shared by the lessons -----------------------------------------------


def fmt_matrix(m: np.ndarray, decimals: int = 2, indent: str = "  ") -> str:
    """A 2-D array as aligned rows with a fixed number of decimals."""
    m = np.asarray(m, dtype=float)
    cells = [[f"{x:.{decimals}f}" for x in row] for row in m]
    width = max((len(c) for row in cells for c in row), default=1)
    return "\n".join(indent + "[" + ", ".join(c.rjust(width) for c in row) + "]" for row in cells)


def fmt_labeled(labels: Sequence[str], values: Sequence[float], decimals: int = 2) -> str:
    """``{'床': 0.12, ...}``: Python's round() as the course prints it, so 0.004 shows as 0.0."""
    return (
        "{"
        + ", ".join(
            f"'{lab}': {round(float(v), decimals)}" for lab, v in zip(labels, values, strict=True)
        )
        + "}"
    )


def fmt_table(header: Sequence[str], rows: Sequence[Sequence[object]], indent: str = "  ") -> str:
    """A plain text table; column widths count East Asian wide characters as two."""
    return text_table(header, rows, indent)
