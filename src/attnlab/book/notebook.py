"""A lesson as one page of the book: the lessons' own notebook export, plus what a page needs.

``exported`` is the only place that calls the lessons' exporter (whatever shape it takes, it
gives the notebook of a lesson, a language, a seed and setup overrides such as ``BUDGET``).
``page_notebook`` then changes two things for reading rather than running: each quiz cell
becomes its answer, folded, and lesson 1 gets the playground right after the step it plays
with. Cells the book adds are Markdown; no code is added, so the notebook the reader downloads
runs exactly as the lesson's own export.
"""

from __future__ import annotations

import html
import importlib
import json
import re

from ..lessons import answers, source
from .words import WORDS

PLAYGROUNDS = {1: "query_key"}  # lesson -> the step after whose words the playground sits
PLAYGROUND_FILE = "playground.html"  # beside the lesson's page (html_extra_path)
QUIZ_CALL = re.compile(r"\bquiz\(\s*(\d+)\s*,\s*(\d+)\s*,")


def setup_constants(number: int) -> set[str]:
    """The UPPER_CASE names the lesson's setup cell assigns (SEED, LANG, BUDGET, ...)."""
    setup = [c.code for c in source.cells(number) if c.kind == "setup"]
    return set(re.findall(r"^([A-Z][A-Z0-9_]*) = ", "\n".join(setup), flags=re.M))


def exported(number: int, lang: str, seed: int = 0, overrides: dict | None = None) -> dict:
    """The lesson's notebook (nbformat 4 as a dict) as the lessons' exporter makes it.

    ``overrides`` (e.g. ``{"BUDGET": 5}``) reach only a lesson whose setup defines the name;
    the others keep their defaults."""
    export = importlib.import_module("attnlab.lessons.export")
    wanted = {k: v for k, v in (overrides or {}).items() if k in setup_constants(number)}
    return json.loads(export.to_ipynb(export.notebook(number, lang, seed, wanted or None)))


def page_notebook(number: int, lang: str, seed: int = 0, overrides: dict | None = None) -> str:
    """The notebook the book's page for lesson ``number`` in ``lang`` is built from (JSON)."""
    nb = exported(number, lang, seed, overrides)
    cells = [_joined_cjk(_folded_quiz(c, lang)) for c in nb["cells"]]
    if number in PLAYGROUNDS:
        cells = _with_playground(cells, number, lang)
    for i, c in enumerate(cells):
        c["id"] = f"cell-{i}"
    nb["cells"] = cells
    return json.dumps(nb, ensure_ascii=False, indent=1) + "\n"


def _text(cell: dict) -> str:
    src = cell.get("source", "")
    return src if isinstance(src, str) else "".join(src)


def _markdown(text: str) -> dict:
    return {"cell_type": "markdown", "id": "", "metadata": {}, "source": text}


CJK = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
CJK_BREAK = re.compile(f"(?<=[{CJK}])\n(?=[{CJK}])")


def _joined_cjk(cell: dict) -> dict:
    """Prose lines that break between two Chinese or Japanese characters, joined: a browser
    shows such a break as a space, which these languages do not have."""
    if cell["cell_type"] != "markdown":
        return cell
    parts = re.split(r"(```.*?```)", _text(cell), flags=re.S)  # leave code blocks alone
    text = "".join(p if p.startswith("```") else CJK_BREAK.sub("", p) for p in parts)
    return {**cell, "source": text}


def _folded_quiz(cell: dict, lang: str) -> dict:
    """A quiz cell (it would print "no answer yet" on the page) becomes the answer, folded."""
    m = QUIZ_CALL.search(_text(cell)) if cell["cell_type"] == "code" else None
    if m is None:
        return cell
    number, k = int(m.group(1)), int(m.group(2))
    question = source.prose(number, lang).quiz[k - 1]
    reveal = answers.reveal(question, lang).replace("\n", "\n\n", 1)
    return _markdown(
        f'<details class="attnlab-answer"><summary>{html.escape(WORDS["answer"](lang))}</summary>'
        f"\n\n{reveal}\n\n</details>"
    )


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
            after = cells[i + 1 : i + 2]
            at = i + 2 if after and after[0]["cell_type"] == "markdown" else i + 1
            break
    frame = _markdown(
        f"{WORDS['playground'](lang)}\n\n"
        f'<iframe class="attnlab-playground" src="{PLAYGROUND_FILE}" '
        f'title="{html.escape(WORDS["playground"](lang))}"></iframe>'
    )
    return [*cells[:at], frame, *cells[at:]]


__all__ = ["PLAYGROUNDS", "PLAYGROUND_FILE", "exported", "page_notebook", "setup_constants"]
