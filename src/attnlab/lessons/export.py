"""``attnlab lesson N --export DIR``: the lesson as a script and a notebook the learner edits.

Both come from one list of cells: the prose in the chosen language (numbers filled in by running
the lesson once), the lesson's code exactly as ``attnlab lesson N`` shows and runs it, each
exercise as its starting code followed by the cell that checks it (the worked answer hidden
under a fold), and the quiz as cells that check an answer.

- ``lessonN.py``: ``py:percent`` cells (``# %%``), so ``python lessonN.py`` runs it and editors
  and jupytext open it as a notebook;
- ``lessonN.ipynb``: nbformat 4, for Jupyter and Colab.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError
from ..files import atomic_write_text
from ..i18n import Text
from . import engine, runner, source

FORMATS = ("py", "ipynb", "both")

WORDS = {
    "install": Text(
        "Needs attnlab. In Colab or a fresh environment, remove the # before %pip and run this cell.",
        "attnlab が必要です。Colab や新しい環境では、%pip の前の # を消してこのセルを実行します。",
        "需要 attnlab。在 Colab 或新环境中，删去 %pip 前面的 #，再运行这个单元格。",
    ),
    "exercises": Text("Exercises", "練習問題", "练习"),
    "solution": Text("Worked answer", "模範解答", "参考答案"),
    "quiz": Text("Quiz", "確認テスト", "小测验"),
    "answer_here": Text(
        "your answer between the quotes",
        "引用符の間にあなたの答え",
        "把你的答案写在引号之间",
    ),
}


@dataclass(frozen=True)
class Cell:
    kind: str  # "markdown" or "code"
    text: str


def build(number: int, lang: str = "en", seed: int = 0) -> list[Cell]:
    """The lesson as notebook cells, its prose filled with the numbers of this seed."""
    engine.get(number)
    engine.check_lang(lang)
    words = source.prose(number, lang)
    s = runner.Session(number, seed, lang)
    cells = [
        Cell("markdown", f"# {engine.title(number, lang)}\n\n{words.intro}"),
        Cell("code", f"# {WORDS['install'](lang)}\n# %pip install attnlab\nimport attnlab"),
    ]
    k = 0
    for cell in source.cells(number):
        if cell.kind == "setup":
            s.run_cell(cell, quiet=True)
            cells.append(Cell("code", runner.code_of(cell, seed, lang)))
        elif cell.kind == "step":
            k += 1
            s.run_cell(cell, quiet=True)
            cells.append(Cell("markdown", f"## {k}. {words.titles[cell.id]}"))
            cells.append(Cell("code", cell.code))
            if words.texts.get(cell.id):
                cells.append(Cell("markdown", source.fill(words.texts[cell.id], s.ns)))
    cells += _exercises(number, s, lang)
    cells += _quiz(number, lang)
    return cells


def _exercises(number: int, s: runner.Session, lang: str) -> list[Cell]:
    exercises = runner.exercises(number)
    words = source.prose(number, lang)
    cells = [Cell("markdown", f"## {WORDS['exercises'](lang)}")] if exercises else []
    for k, cell in enumerate(exercises, 1):
        solution = runner.part(number, "solution", cell.id)[0]
        worked = s.fork()
        worked.run_cell(solution, quiet=True)
        after = source.fill(words.texts.get(f"{cell.id}/solution", ""), worked.ns)
        cells += [
            Cell("markdown", f"### {k}. {words.titles[cell.id]}\n\n{words.texts.get(cell.id, '')}"),
            Cell("code", cell.code),
            Cell("code", runner.check_code(number, cell)),
            Cell(
                "markdown",
                f"<details><summary>{WORDS['solution'](lang)}</summary>\n\n"
                f"```python\n{solution.code}\n```\n\n{after}\n\n</details>",
            ),
        ]
    return cells


def _quiz(number: int, lang: str) -> list[Cell]:
    questions = source.prose(number, lang).quiz
    cells = [Cell("markdown", f"## {WORDS['quiz'](lang)}")] if questions else []
    for i, q in enumerate(questions, 1):
        choices = "".join(f"\n- {c}" for c in q.choices)
        cells.append(Cell("markdown", f"**{i}.** {q.question}\n{choices}".rstrip()))
        cells.append(
            Cell(
                "code",
                f'answer = ""  # {WORDS["answer_here"](lang)}\nquiz({number}, {i}, answer, lang=LANG)',
            )
        )
    return cells


def to_py(cells: list[Cell]) -> str:
    """``py:percent``: markdown cells as comments under ``# %% [markdown]``, code under ``# %%``."""
    parts = []
    for c in cells:
        if c.kind == "markdown":
            body = "\n".join(f"# {line}".rstrip() for line in c.text.splitlines())
            parts.append(f"# %% [markdown]\n{body}")
        else:
            parts.append(f"# %%\n{c.text}")
    return "\n\n".join(parts) + "\n"


def to_ipynb(cells: list[Cell]) -> str:
    """nbformat 4.5 JSON (no outputs: the learner runs it)."""
    nb_cells = []
    for i, c in enumerate(cells):
        lines = c.text.splitlines(keepends=True)
        cell = {"cell_type": c.kind, "id": f"cell-{i}", "metadata": {}, "source": lines}
        if c.kind == "code":
            cell.update(execution_count=None, outputs=[])
        nb_cells.append(cell)
    nb = {
        "cells": nb_cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb, ensure_ascii=False, indent=1) + "\n"


def export(
    number: int,
    folder: str | Path,
    lang: str = "en",
    fmt: str = "both",
    seed: int = 0,
    force: bool = False,
) -> list[Path]:
    """Write ``lessonN.py`` and/or ``lessonN.ipynb`` into ``folder``; never over a learner's
    edited file unless ``force``."""
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--export {folder}: a file, expected a folder")
    suffixes = ["py", "ipynb"] if fmt == "both" else [fmt]
    targets = [folder / f"lesson{number}.{x}" for x in suffixes]
    existing = [str(p) for p in targets if p.exists()]
    if existing and not force:
        raise UserError(
            f"{', '.join(existing)} already there (your edits?); pass --force to overwrite"
        )
    cells = build(number, lang, seed)
    folder.mkdir(parents=True, exist_ok=True)
    writers = {"py": to_py, "ipynb": to_ipynb}
    return [atomic_write_text(p, writers[p.suffix[1:]](cells)) for p in targets]


__all__ = ["FORMATS", "Cell", "build", "export", "to_ipynb", "to_py"]
