"""Plots of attention: heatmaps with token labels, head grids, charts (matplotlib, Agg).

Imported only by commands that draw; ``import attnlab`` never loads matplotlib.
"""

from .fonts import MissingCJKFontWarning, find_cjk_font, needs_cjk, use_cjk_font
from .heatmap import bars, compare_weights, head_grid, heatmap, save

__all__ = [
    "MissingCJKFontWarning",
    "bars",
    "compare_weights",
    "find_cjk_font",
    "head_grid",
    "heatmap",
    "needs_cjk",
    "save",
    "use_cjk_font",
]
