"""Plots of attention: heatmaps with token labels, head grids, charts (matplotlib object API).

Imported only by commands that draw; ``import attnlab`` never loads matplotlib.
``attnlab.viz.explore`` (the interactive page) lives in ``attnlab.explore``: it is looked up
when first used, so neither package imports the other at import time.
"""

from .fonts import MissingCJKFontWarning, find_cjk_font, needs_cjk, use_cjk_font
from .heatmap import (
    alignment,
    bars,
    compare_weights,
    head_grid,
    heatmap,
    plot_alignment,
    save,
)

_FROM_EXPLORE = ("Explorer", "explore")


def __getattr__(name: str):
    if name in _FROM_EXPLORE:
        from .. import explore as page

        return getattr(page, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Explorer",
    "MissingCJKFontWarning",
    "alignment",
    "bars",
    "compare_weights",
    "explore",
    "find_cjk_font",
    "head_grid",
    "heatmap",
    "needs_cjk",
    "plot_alignment",
    "save",
    "use_cjk_font",
]
