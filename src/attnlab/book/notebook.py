"""A lesson as one page of the book: the lessons' own notebook export, plus what a page needs.

``exported`` is the only place that calls the lessons' exporter: the notebook of a lesson, a
language, a seed and setup overrides such as ``STEPS``, exported without running anything.
Its prose that shows numbers comes as small code cells, hidden on the page (``remove-input``),
that fill the text in the kernel from the cells above them (``live``): the page's words and its
outputs come from the same single run. ``page_notebook`` then changes two things for reading
rather than running: each quiz cell becomes its answer, folded, and lesson 1 gets the
playground right after the step it plays with.
"""

from __future__ import annotations

import html
import re

import nbformat

from ..lessons import answers, notebooks, render, source
from ..lessons.runner import setup_constants
from . import live
from .words import WORDS

PLAYGROUNDS = {1: "query_key"}  # lesson -> the step after whose words the playground sits
PLAYGROUND_FILE = "playground.html"  # beside the lesson's page (html_extra_path)
QUIZ_CALL = re.compile(r"\bquiz\(\s*(\d+)\s*,\s*(\d+)\s*,")
HIDDEN = {"tags": ["remove-input"]}  # myst-nb shows the output only


def exported(number: int, lang: str, seed: int = 0, overrides: dict | None = None) -> list[dict]:
    """The lesson's notebook cells (nbformat 4 dicts) as the lessons' exporter makes them,
    nothing executed; prose with numbers as hidden cells that fill it in the kernel.

    ``overrides`` (e.g. ``{"STEPS": 5}``) reach only a lesson whose setup defines the name;
    the others keep their defaults."""
    wanted = {k: v for k, v in (overrides or {}).items() if k in setup_constants(number)}
    built = notebooks.build(number, lang, seed, wanted or None, run=False)
    cells = []
    for i, c in enumerate(built):
        if c.kind == notebooks.NUMBERS:
            code = live.call(number, lang, c.text)
            cells.append(nbformat.v4.new_code_cell(code, metadata=HIDDEN))
        else:
            cells.append(notebooks.notebook_cell(c, f"cell-{i}"))
    if any(c.kind == notebooks.NUMBERS for c in built):  # after the cell that installs attnlab
        cells.insert(2, nbformat.v4.new_code_cell(live.IMPORT, metadata={"tags": ["remove-cell"]}))
    return cells


def page_notebook(number: int, lang: str, seed: int = 0, overrides: dict | None = None) -> str:
    """The notebook the book's page for lesson ``number`` in ``lang`` is built from (JSON)."""
    nb = notebooks.to_notebook([])
    cells = [_folded_quiz(c, lang) for c in exported(number, lang, seed, overrides)]
    if number in PLAYGROUNDS:
        cells = _with_playground(cells, number, lang)
    for i, c in enumerate(cells):
        c["id"] = f"cell-{i}"
    nb.cells = [nbformat.from_dict(c) for c in cells]
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"


def _text(cell: dict) -> str:
    src = cell.get("source", "")
    return src if isinstance(src, str) else "".join(src)


def _markdown(text: str) -> dict:
    return {"cell_type": "markdown", "id": "", "metadata": {}, "source": text}


def _folded_quiz(cell: dict, lang: str) -> dict:
    """A quiz cell (it would print "no answer yet" on the page) becomes the answer, folded."""
    m = QUIZ_CALL.search(_text(cell)) if cell["cell_type"] == "code" else None
    if m is None:
        return cell
    number, k = int(m.group(1)), int(m.group(2))
    question = source.prose(number, lang).quiz[k - 1]
    reveal = render.join_cjk(answers.reveal(question, lang).replace("\n", "\n\n", 1))
    return _markdown(
        f'<details class="attnlab-answer"><summary>{html.escape(WORDS["answer"](lang))}</summary>'
        f"\n\n{reveal}\n\n</details>"
    )


def _hidden(cell: dict) -> bool:
    return "remove-input" in cell.get("metadata", {}).get("tags", [])


def _code_only(code: str) -> list[str]:
    """The code without comments (the export may translate them) or blank lines."""
    lines = (re.sub(r"(^|\s)#.*$", "", line).strip() for line in code.splitlines())
    return [line for line in lines if line]


def _with_playground(cells: list[dict], number: int, lang: str) -> list[dict]:
    """The playground after the words that follow the step's code (at the end if not found)."""
    step = next(c.code for c in source.cells(number) if c.id == PLAYGROUNDS[number])
    at = len(cells)
    for i, c in enumerate(cells):
        if c["cell_type"] == "code" and _code_only(_text(c)) == _code_only(step):
            after = cells[i + 1 : i + 2]  # its words: Markdown, or a cell that fills them in
            at = (
                i + 2
                if after and (after[0]["cell_type"] == "markdown" or _hidden(after[0]))
                else i + 1
            )
            break
    frame = _markdown(
        f"{WORDS['playground'](lang)}\n\n"
        f'<iframe class="attnlab-playground" src="{PLAYGROUND_FILE}" '
        f'title="{html.escape(WORDS["playground"](lang))}"></iframe>'
    )
    return [*cells[:at], frame, *cells[at:]]


__all__ = ["PLAYGROUNDS", "PLAYGROUND_FILE", "exported", "page_notebook", "setup_constants"]
