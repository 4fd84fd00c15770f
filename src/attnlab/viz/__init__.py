"""Plots of attention: heatmaps with token labels, head grids, charts (matplotlib object API).

Imported only by commands that draw; ``import attnlab`` never loads matplotlib.
"""

from ..explore import Explorer, explore
from .fonts import MissingCJKFontWarning, find_cjk_font, needs_cjk, use_cjk_font
from .heatmap import bars, compare_weights, head_grid, heatmap, save

__all__ = [
    "Explorer",
    "MissingCJKFontWarning",
    "bars",
    "compare_weights",
    "explore",
    "find_cjk_font",
    "head_grid",
    "heatmap",
    "needs_cjk",
    "save",
    "use_cjk_font",
]
