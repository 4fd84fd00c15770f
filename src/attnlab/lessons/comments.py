"""The code's words in the learner's language: its comments and the strings it prints; the code
itself stays written once.

``content/lessonN/comments.<lang>.json`` maps each English comment's text (what follows ``#``,
stripped) to its translation::

    {"(T, 4): one vector per character": "(T, 4)：1 文字に 1 つのベクトル"}

``content/lessonN/strings.<lang>.json`` does the same for string literals the lesson prints or
draws (table headers, labels, a docstring it shows): each key is a literal's body as written
between its quotes (an f-string's ``{fields}`` included), each value the body written in
``lang``, with the same fields::

    {"weights of sequence 1, head 0 =": "系列 1・ヘッド 0 の重み ="}

``translate`` swaps each comment and literal it finds there and leaves the rest of the line
alone, so a ja or zh learner reads (and runs, and exports) ``print(table(["試行", ...]))``
where the English code has ``print(table(["trial", ...]))``. A literal that is a key the code
looks up (a dict key, a mistake id) is simply not in the catalogue. What is missing stays
English. Everything the learner sees or exports (the terminal, ``lessonN.py``,
``lessonN.ipynb``) goes through ``runner.code_of``, which calls it.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from functools import cache

from . import source

_QUOTE = re.compile(r"^([A-Za-z]*)('''|\"\"\"|'|\")")


@cache
def _load(number: int, lang: str, kind: str) -> dict[str, str]:
    if lang == "en":
        return {}
    path = source._content(number) / f"{kind}.{lang}.json"
    if not path.is_file():
        return {}
    return dict(json.loads(path.read_text(encoding="utf-8")))


def catalogue(number: int, lang: str) -> dict[str, str]:
    """Lesson ``number``'s comment translations into ``lang`` ({} for English or none)."""
    return _load(number, lang, "comments")


def strings(number: int, lang: str) -> dict[str, str]:
    """Lesson ``number``'s printed strings in ``lang`` ({} for English or none)."""
    return _load(number, lang, "strings")


def _tokens(code: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(code + "\n").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []


def found(code: str) -> list[tuple[int, int, int, str]]:
    """Each comment in ``code``: (row, start column, end column, its text after ``#``)."""
    return [
        (t.start[0] - 1, t.start[1], t.end[1], t.string[1:].strip())
        for t in _tokens(code)
        if t.type == tokenize.COMMENT
    ]


def literals(code: str) -> list[tuple[int, int, str, str, str]]:
    """Each string literal in ``code``: (start offset, end offset, its prefix and opening
    quote, its body, its closing quote); offsets count characters of ``code``."""
    starts = [0]
    for line in code.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    out = []
    for t in _tokens(code):
        head = _QUOTE.match(t.string) if t.type == tokenize.STRING else None
        if head:
            opening, closing = head.group(0), head.group(2)
            body = t.string[len(opening) : len(t.string) - len(closing)]
            a, b = starts[t.start[0] - 1] + t.start[1], starts[t.end[0] - 1] + t.end[1]
            out.append((a, b, opening, body, closing))
    return out


def translate(code: str, number: int, lang: str) -> str:
    """``code`` with every comment and printed string the catalogues know in ``lang``."""
    notes, words = catalogue(number, lang), strings(number, lang)
    if not notes and not words:
        return code
    starts = [0]
    for line in code.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    swaps = []  # (start offset, end offset, new text), applied from the end
    for row, start, end, text in found(code):
        if notes.get(text):
            swaps.append((starts[row] + start, starts[row] + end, "# " + notes[text]))
    for a, b, opening, body, closing in literals(code):
        if words.get(body):
            swaps.append((a, b, opening + words[body] + closing))
    for a, b, new in sorted(swaps, reverse=True):
        code = code[:a] + new + code[b:]
    return code


__all__ = ["catalogue", "found", "literals", "strings", "translate"]
