"""``attnlab.viz.explore``: the explorer page as an object that shows itself in a notebook.

In Jupyter and Colab ``_repr_html_`` puts the page in an iframe (``srcdoc``, sandboxed to run
scripts and download only), so two explorers in one notebook never share a script or a style,
and nothing is fetched: the page carries everything.
"""

from __future__ import annotations

import html
from pathlib import Path

from ..files import atomic_write_text
from . import data, page


class Explorer:
    """An explorer page: ``.html`` is the file's text, ``.save(path)`` writes it."""

    def __init__(self, text: str, height: int = 720):
        self.html, self.height = text, height

    def save(self, path: str | Path) -> Path:
        return atomic_write_text(path, self.html)

    def _repr_html_(self) -> str:
        return (
            f'<iframe srcdoc="{html.escape(self.html, quote=True)}" '
            'sandbox="allow-scripts allow-downloads" '
            f'style="width:100%;height:{self.height}px;border:1px solid #ddd" '
            'title="attnlab explore"></iframe>'
        )


def explore(
    run_dir: str | Path | None = None,
    texts: str | list[str] | None = None,
    *,
    lang: str = "en",
    playground: bool = False,
) -> Explorer:
    """The page for a GPT or seq2seq run on ``texts`` (one or several), or with
    ``playground=True`` lesson 1's live example. Shows inline in Jupyter."""
    if playground:
        return Explorer(page.playground_page(lang), height=620)
    if run_dir is None:
        from ..errors import UserError

        raise UserError("explore needs a run directory (or playground=True)")
    texts = [texts] if isinstance(texts, str) else list(texts or [])
    return Explorer(page.model_page(data.for_run(run_dir, texts), lang))


__all__ = ["Explorer", "explore"]
