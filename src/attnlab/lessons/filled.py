"""The words of a lesson step, filled from the namespace where its code just ran.

An exported notebook of a lesson that trains shows each text with numbers through a small code
cell, ``attnlab.lessons.say(N, "step", globals())``: the words then come from the values the
cells above computed in that same kernel (or script), so text and outputs agree after any
re-run, with any ``STEPS``. In Jupyter the text is shown as Markdown; in a plain ``python``
run of the exported script it is printed as the terminal lesson prints it.
"""

from __future__ import annotations

import sys

from . import render, source


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (IPython with a kernel), not a plain python."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and hasattr(shell, "kernel")


def said(number: int, key: str, ns: dict) -> str:
    """Lesson ``number``'s text ``key`` in ``ns["LANG"]``, its choices made and its
    placeholders filled from ``ns``."""
    return source.fill(source.prose(number, ns.get("LANG", "en")).texts[key], ns)


def say(number: int, key: str, ns: dict) -> None:
    """Show lesson ``number``'s text ``key`` filled from ``ns`` (a notebook's ``globals()``):
    Markdown in Jupyter, printed text elsewhere."""
    text = said(number, key, ns)
    if _in_notebook():
        from IPython.display import Markdown, display

        display(Markdown(render.join_cjk(text)))
        return
    con = render.console(sys.stdout)
    con.print()
    render.prose(con, text)


__all__ = ["said", "say"]
