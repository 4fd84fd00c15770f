"""What the book's kernel runs to fill a page's prose with the numbers of that same run.

A page's notebook is exported without executing anything (``export.build(run=False)``): a text
that shows numbers becomes a small code cell, tagged ``remove-input``, that calls ``prose`` or
``worked`` with the kernel's namespace. The page then shows the prose as Markdown, filled with
the values the cells above it computed in that kernel: one run gives the outputs and the words.
"""

from __future__ import annotations

import importlib
import re

from ..lessons import runner, source

CJK = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
CJK_BREAK = re.compile(f"(?<=[{CJK}])\n(?=[{CJK}])")


def joined_cjk(text: str) -> str:
    """Prose lines that break between two Chinese or Japanese characters, joined: a browser
    shows such a break as a space, which these languages do not have (code blocks kept)."""
    parts = re.split(r"(```.*?```)", text, flags=re.S)
    return "".join(p if p.startswith("```") else CJK_BREAK.sub("", p) for p in parts)


def prose(number: int, lang: str, key: str, ns: dict):
    """Lesson ``number``'s text ``key`` in ``lang``, filled from ``ns``, as Markdown."""
    from IPython.display import Markdown

    text = source.fill(source.prose(number, lang).texts[key], ns)
    return Markdown(joined_cjk(text))


def worked(number: int, lang: str, ident: str, ns: dict):
    """Exercise ``ident``'s folded worked answer, its numbers from running the answer on a copy
    of ``ns`` (the kernel's own state is left as it was), as Markdown."""
    from IPython.display import Markdown

    export = importlib.import_module("attnlab.lessons.export")
    s = runner.Session(number, ns.get("SEED", 0), lang, ns, _overrides(number, ns))
    return Markdown(joined_cjk(export.worked_answer(s, ident).text))


def _overrides(number: int, ns: dict) -> dict:
    """The tunable setup constants (BUDGET) as this kernel set them."""
    return {name: ns[name] for name in runner.tunable(number) if name in ns}


def call(kind: str, number: int, lang: str, key: str) -> str:
    """The code of a page's hidden cell that shows text ``key`` (``kind``: prose or worked)."""
    ident = key.removesuffix("/solution") if kind == "worked" else key
    return f'_book.{kind}({number}, "{lang}", "{ident}", globals())'


IMPORT = "import attnlab.book.live as _book  # fills the page's prose from this kernel"

__all__ = ["IMPORT", "call", "joined_cjk", "prose", "worked"]
