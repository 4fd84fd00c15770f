"""The code's comments in the learner's language; the code itself stays written once.

``content/lessonN/comments.<lang>.json`` is a JSON object mapping each English comment's text
(what follows ``#``, stripped) to its translation::

    {"(T, 4): one vector per character": "(T, 4)：1 文字に 1 つのベクトル"}

``translate`` swaps each comment it finds there and leaves the rest of the line alone; a
comment (or a whole catalogue) that is missing stays English. Everything the learner sees or
exports (the terminal, ``lessonN.py``, ``lessonN.ipynb``) goes through ``runner.code_of``,
which calls it.
"""

from __future__ import annotations

import io
import json
import tokenize
from functools import cache

from . import source


@cache
def catalogue(number: int, lang: str) -> dict[str, str]:
    """Lesson ``number``'s comment translations into ``lang`` ({} for English or none)."""
    if lang == "en":
        return {}
    path = source._content(number) / f"comments.{lang}.json"
    if not path.is_file():
        return {}
    return dict(json.loads(path.read_text(encoding="utf-8")))


def found(code: str) -> list[tuple[int, int, int, str]]:
    """Each comment in ``code``: (row, start column, end column, its text after ``#``)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code + "\n").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    return [
        (t.start[0] - 1, t.start[1], t.end[1], t.string[1:].strip())
        for t in tokens
        if t.type == tokenize.COMMENT
    ]


def translate(code: str, number: int, lang: str) -> str:
    """``code`` with every comment the catalogue knows in ``lang``."""
    words = catalogue(number, lang)
    if not words:
        return code
    lines = code.split("\n")
    for row, start, end, text in reversed(found(code)):
        if words.get(text):
            line = lines[row]
            lines[row] = line[:start] + "# " + words[text] + line[end:]
    return "\n".join(lines)


__all__ = ["catalogue", "found", "translate"]
