"""What lesson code calls to print and draw: short, so the code on the page stays about attention.

``labeled``, ``matrix`` and ``table`` return text to print. ``plot(name, fig_fn)`` draws only when
asked: ``attnlab lesson N --plots DIR`` saves a PNG, a Jupyter kernel shows the figure inline,
and a plain ``python lessonN.py`` draws nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..tables import text_table

_plots: dict[str, object] = {"dir": None, "quiet": False, "written": []}


def matrix(m, decimals: int = 2, indent: str = "  ") -> str:
    """A 2-D array as aligned rows with a fixed number of decimals."""
    m = np.atleast_2d(np.asarray(m, dtype=float))
    cells = [[f"{x:.{decimals}f}" for x in row] for row in m]
    width = max((len(c) for row in cells for c in row), default=1)
    return "\n".join(indent + "[" + ", ".join(c.rjust(width) for c in row) + "]" for row in cells)


def labeled(labels: Sequence[str], values, decimals: int = 2) -> str:
    """``{'床': 0.12, ...}``: Python's round(), as the course prints it (0.004 shows as 0.0)."""
    pairs = zip(labels, np.asarray(values, dtype=float), strict=True)
    return "{" + ", ".join(f"'{lab}': {round(float(v), decimals)}" for lab, v in pairs) + "}"


def table(header: Sequence[object], rows: Sequence[Sequence[object]], indent: str = "  ") -> str:
    """A plain text table; column widths count East Asian wide characters as two."""
    return text_table([str(h) for h in header], rows, indent)


def plot(name: str, draw: Callable[[], object]) -> None:
    """Save ``draw()`` as ``name.png`` (with ``--plots``) or show it in Jupyter; else nothing."""
    folder = _plots["dir"]
    if _plots["quiet"] or (folder is None and not _in_kernel()):
        return
    if folder is not None:
        from ..viz import save

        path = save(draw(), Path(folder) / f"{name}.png")
        _plots["written"].append(path)
        print(f"  [plot] {path}")
        return
    import matplotlib.pyplot as plt
    from IPython.display import display  # a Jupyter kernel: IPython is there

    fig = draw()
    display(fig)
    plt.close(fig)


def heat(w, rows: Sequence[str] | None = None, cols: Sequence[str] | None = None, **kw) -> Callable:
    """A function drawing ``w`` (T, S) as a heatmap, for ``plot``."""

    def draw():
        from ..viz import heatmap

        return heatmap(np.asarray(w), rows, cols, **kw)

    return draw


def bars(series: dict[str, Sequence[float]], labels: Sequence[str], **kw) -> Callable:
    """A function drawing grouped bars, one group per label, for ``plot``."""

    def draw():
        from ..viz import bars as draw_bars

        first = next(iter(series.values()))
        return draw_bars(first, labels, series=series, **kw)

    return draw


def _in_kernel() -> bool:
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    return get is not None and get() is not None and "ipykernel" in sys.modules


@contextmanager
def plotting(folder: str | Path | None = None, quiet: bool = False):
    """While inside: ``plot`` saves into ``folder`` (or draws nothing when ``quiet``)."""
    saved = dict(_plots)
    _plots.update(dir=folder, quiet=quiet, written=[])
    try:
        yield _plots["written"]
    finally:
        _plots.update(saved)


__all__ = ["bars", "heat", "labeled", "matrix", "plot", "plotting", "table"]
