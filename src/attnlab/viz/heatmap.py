"""Attention weights as pictures: annotated heatmaps, head grids and simple charts.

All functions return a matplotlib ``Figure`` made with the object API (no pyplot figure, nothing
is shown, the backend left as it is: a Jupyter kernel keeps its inline backend) and take the
labels to draw; ``save`` writes a PNG atomically (temp file in the same folder, then rename).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt  # only for callers that draw with it (train.curves)
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..files import atomic_write
from .fonts import needs_cjk, use_cjk_font


def _prepare_fonts(*labels: object) -> None:
    if needs_cjk(*labels):
        use_cjk_font()


MAX_INCHES = (10.0, 8.0)  # a heatmap's largest figure
DENSE_TICKS = 32  # up to this many rows/columns get one tick each
GRID_INCHES = 13.0  # a head grid's largest side
TOLERANCE = 1e-4  # compare_weights: a cell off by more than this (absolute and relative) is wrong


def heatmap(
    weights: np.ndarray,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    title: str = "",
    annotate: bool | None = None,
    ax: Axes | None = None,
    xlabel: str = "key",
    ylabel: str = "query",
    vmin: float | None = 0.0,
    vmax: float | None = None,
    cmap: str = "viridis",
) -> Figure:
    """A ``(T, S)`` weight matrix, rows = queries, columns = keys, values written in the cells
    (when ``annotate``, default: for matrices up to 12 x 12). The figure grows with the matrix
    up to 10 x 8 inches; past 32 rows or columns the ticks thin out instead of every index."""
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D (T, S) array, got shape {weights.shape}")
    _prepare_fonts(row_labels, col_labels, title, xlabel, ylabel)
    T, S = weights.shape
    if ax is None:
        width = min(MAX_INCHES[0], max(3.0, 0.55 * S + 1.8))
        height = min(MAX_INCHES[1], max(2.6, 0.5 * T + 1.4))
        fig = Figure(figsize=(width, height))
        ax = fig.subplots()
    else:
        fig = ax.figure
    im = ax.imshow(weights, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    if S <= DENSE_TICKS or col_labels is not None:
        ax.set_xticks(range(S), col_labels if col_labels is not None else range(S))
    if T <= DENSE_TICKS or row_labels is not None:
        ax.set_yticks(range(T), row_labels if row_labels is not None else range(T))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if annotate if annotate is not None else (T <= 12 and S <= 12):
        hi = np.nanmax(weights) if np.isfinite(weights).any() else 0.0  # all NaN: no warning
        for t in range(T):
            for s in range(S):
                w = weights[t, s]
                color = "black" if w > 0.6 * hi else "white"
                ax.text(s, t, f"{w:.2f}", ha="center", va="center", fontsize=8, color=color)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    return fig


def head_grid(
    weights: np.ndarray,
    labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    title: str = "",
    row_name: str = "layer",
    col_name: str = "head",
    layers: Sequence[int] | None = None,
    heads: Sequence[int] | None = None,
) -> Figure:
    """A grid of heatmaps: ``weights`` ``(L, H, T, S)`` -> L rows x H columns of panels.

    ``layers``/``heads`` are the numbers shown in the panel titles (default 0..L-1, 0..H-1), so
    a slice of a model's weights keeps the model's own layer and head numbers."""
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 4:
        raise ValueError(f"head_grid needs (L, H, T, S) weights, got shape {weights.shape}")
    L, H, T, S = weights.shape
    layers = list(range(L)) if layers is None else list(layers)
    heads = list(range(H)) if heads is None else list(heads)
    key_labels = labels if key_labels is None else key_labels
    _prepare_fonts(labels, key_labels, title)
    panel = min(2.4, (GRID_INCHES - 0.6) / H, (GRID_INCHES - 0.6) / L)  # panels shrink to fit
    fig = Figure(figsize=(panel * H + 0.6, panel * L + 0.6))
    axes = fig.subplots(L, H, squeeze=False)
    for i in range(L):
        for h in range(H):
            ax = axes[i, h]
            ax.imshow(weights[i, h], cmap="viridis", vmin=0.0, aspect="auto")
            ax.set_title(f"{row_name} {layers[i]} · {col_name} {heads[h]}", fontsize=8)
            small = T <= 24 and S <= 24
            ax.set_xticks(range(S) if small else [], key_labels if small and key_labels else [])
            ax.set_yticks(range(T) if small else [], labels if small and labels else [])
            ax.tick_params(labelsize=6)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def bars(
    values: Sequence[float] | np.ndarray,
    labels: Sequence[str],
    title: str = "",
    ylabel: str = "",
    series: dict[str, Sequence[float]] | None = None,
) -> Figure:
    """Grouped bar chart: one group per label, one bar per series (default: one series)."""
    series = series if series is not None else {"": list(values)}
    _prepare_fonts(labels, title, ylabel, list(series))
    fig = Figure(figsize=(max(4.0, 0.8 * len(labels) + 2), 3.2))
    ax = fig.subplots()
    width = 0.8 / len(series)
    x = np.arange(len(labels))
    for i, (name, vals) in enumerate(series.items()):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, vals, width, label=name or None)
    ax.set_xticks(x, labels)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if len(series) > 1:
        ax.legend()
    fig.tight_layout()
    return fig


def save(fig: Figure, path: str | os.PathLike, dpi: int = 120) -> Path:
    """Write ``fig`` as PNG to ``path`` atomically, close it, and return the path."""
    try:
        return atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=dpi))
    finally:
        plt.close(fig)


def compare_weights(got, expected, title: str = "") -> Figure:
    """A learner's weights beside the expected ones (on one colour scale) and their difference,
    from 0 (white) to the largest one, at least ``TOLERANCE`` (so equal weights read as 0, not
    as a scale around it); cells off by more than ``TOLERANCE`` are outlined in red on all
    three panels. NaN (None) cells show as gaps."""
    g = np.atleast_2d(np.asarray(got, dtype=float))  # None -> nan
    e = np.atleast_2d(np.asarray(expected, dtype=float))
    diff = np.abs(np.nan_to_num(g, nan=np.inf) - e)
    wrong = ~(diff <= TOLERANCE + TOLERANCE * np.abs(e))
    fig = Figure(figsize=(min(13.0, 3 * 0.5 * e.shape[1] + 4), min(8.0, 0.5 * e.shape[0] + 2)))
    axes = fig.subplots(1, 3)
    both = np.concatenate([g[np.isfinite(g)], e[np.isfinite(e)]])
    lo, hi = (min(0.0, both.min()), both.max()) if both.size else (0.0, 1.0)  # one colour scale
    panels = (
        ("yours", g, "viridis", lo, hi),
        ("expected", e, "viridis", lo, hi),
        ("|difference|", diff, "Reds", 0.0, max(TOLERANCE, _finite_max(diff))),
    )
    for ax, (name, a, cmap, vmin, vmax) in zip(axes, panels, strict=True):
        finite = np.where(np.isfinite(a), a, np.nan)
        heatmap(finite, title=name, ax=ax, cmap=cmap, vmin=vmin, vmax=vmax, annotate=a.size <= 64)
        for t, s_ in np.argwhere(wrong):
            ax.add_patch(Rectangle((s_ - 0.5, t - 0.5), 1, 1, fill=False, ec="red", lw=2))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def _finite_max(a: np.ndarray) -> float:
    finite = a[np.isfinite(a)]
    return float(finite.max()) if finite.size else 0.0


def alignment(weights, inp: str, out: str, title: str = "") -> Figure:
    """A seq2seq alignment ``(len(out), len(inp))``: output characters down, input across."""
    return heatmap(
        weights, list(out), list(inp), title=title, xlabel="input", ylabel="output", annotate=False
    )


def plot_alignment(weights, inp: str, out: str, path: str, title: str = "") -> Path:
    """``alignment`` written to ``path`` as a PNG."""
    return save(alignment(weights, inp, out, title), path)
