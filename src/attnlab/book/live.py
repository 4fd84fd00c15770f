"""What the book's kernel runs to fill a page's prose with the numbers of that same run.

A page's notebook is exported without executing anything (``notebooks.build(run=False)``): a text
that shows numbers becomes a small code cell, tagged ``remove-input``, that calls ``prose`` or
``worked`` with the kernel's namespace. The page then shows the prose as Markdown, filled with
the values the cells above it computed in that kernel: one run gives the outputs and the words.
"""

from __future__ import annotations

from ..lessons import notebooks, render, runner, source


def prose(number: int, lang: str, key: str, ns: dict):
    """Lesson ``number``'s text ``key`` in ``lang``, filled from ``ns``, as Markdown."""
    from IPython.display import Markdown

    text = source.fill(source.prose(number, lang).texts[key], ns)
    return Markdown(render.join_cjk(text))


def worked(number: int, lang: str, ident: str, ns: dict):
    """Exercise ``ident``'s folded worked answer, its numbers from running the answer on a copy
    of ``ns`` (the kernel's own state is left as it was), as Markdown."""
    from IPython.display import Markdown

    s = runner.Session(number, ns.get("SEED", 0), lang, ns, _overrides(number, ns))
    return Markdown(render.join_cjk(notebooks.worked_answer(s, ident).text))


def _overrides(number: int, ns: dict) -> dict:
    """The tunable setup constants (STEPS) as this kernel set them."""
    return {name: ns[name] for name in runner.tunable(number) if name in ns}


def call(number: int, lang: str, key: str) -> str:
    """The code of a page's hidden cell that shows text ``key``: a step's prose, or (a key
    ``<exercise>/solution``) that exercise's folded worked answer."""
    ident, solution, _ = key.partition("/solution")
    return f'_book.{"worked" if solution else "prose"}({number}, "{lang}", "{ident}", globals())'


IMPORT = "import attnlab.book.live as _book  # fills the page's prose from this kernel"

__all__ = ["IMPORT", "call", "prose", "worked"]
