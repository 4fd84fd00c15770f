"""What lesson code calls to print and draw: short, so the code on the page stays about attention.

``labeled``, ``matrix`` and ``table`` return text to print. ``heat``, ``bars`` and ``curve``
return a figure that can draw itself twice: ``.figure()`` as a matplotlib ``Figure`` (object
API, no pyplot, no backend switched) and ``.text()`` as characters for a terminal (a shaded
heatmap, bars, sparklines), readable when piped. ``plot(name, fig)`` shows it where the learner
is: a Jupyter kernel shows the image (``image/png``); anywhere else it prints the text figure
and says how to get the image; ``attnlab lesson N --plots DIR`` also saves ``name.png``.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..i18n import Text
from ..tables import display_width, level, pad, spread, text_heatmap, text_table
from . import render

_plots: dict[str, object] = {"dir": None, "quiet": False, "written": [], "hinted": False}

EIGHTHS = " ▏▎▍▌▋▊▉█"
SPARKS = "▁▂▃▄▅▆▇█"
WIDTH = 72  # the text figures' widest line

_ = "\u00a0"  # a space a wrapped line never breaks at: each command stays on one line
HINT = Text(
    f"(To see the figure as an image: save it as a PNG with attnlab{_}lesson{_}{{n}}{_}--plots{_}DIR, "
    f"or run the cells of the notebook that --export{_}DIR writes; attnlab{_}explore{_}--playground "
    "shows it too.)",
    f"（図を画像で見るには、attnlab{_}lesson{_}{{n}}{_}--plots{_}DIR で PNG に保存するか、"
    f"--export{_}DIR で書き出したノートブックのセルを実行します。attnlab{_}explore{_}--playground "
    "でも見られます。）",
    f"（图片可用 attnlab{_}lesson{_}{{n}}{_}--plots{_}DIR 保存为 PNG，或运行 --export{_}DIR "
    f"导出的笔记本中的单元格来查看；attnlab{_}explore{_}--playground 也能显示。）",
)


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
    """A plain text table; column widths count East Asian wide characters as two. A header
    cell with a line break ("max weight\\nraw") takes two lines, so a long header (a Japanese
    one, say) need not make the table wider than the terminal."""
    return text_table([str(h) for h in header], rows, indent)


@dataclass
class Heat:
    """A (T, S) matrix as a heatmap: rows are queries, columns keys (``viz.heatmap``'s options)."""

    w: np.ndarray
    rows: Sequence[str] | None = None
    cols: Sequence[str] | None = None
    options: dict = field(default_factory=dict)

    def figure(self):
        from ..viz import heatmap

        return heatmap(self.w, self.rows, self.cols, **self.options)

    def text(self, width: int = WIDTH) -> str:
        lo, hi = self.options.get("vmin", 0.0), self.options.get("vmax")
        body = text_heatmap(self.w, self.rows, self.cols, lo, hi or None, width)
        axes, last = _axes(self.options), body.rsplit("\n", 1)[-1]
        if display_width(last + axes) > render.PIPED_WIDTH:  # on a line of its own, aligned
            axes = "\n" + last[: len(last) - len(last.lstrip())] + axes.strip()
        return "\n".join(x for x in (_title(self.options), body + axes) if x)

    __call__ = figure  # plot(name, fig) also takes a plain function drawing a Figure


@dataclass
class Bars:
    """Grouped bars: one group per label, one bar per series."""

    series: dict[str, Sequence[float]]
    labels: Sequence[str]
    options: dict = field(default_factory=dict)

    def figure(self):
        from ..viz import bars as draw_bars

        first = next(iter(self.series.values()))
        return draw_bars(first, self.labels, series=self.series, **self.options)

    def text(self, width: int = WIDTH) -> str:
        values = {k: np.asarray(v, dtype=float) for k, v in self.series.items()}
        top = max((np.nanmax(np.abs(v)) for v in values.values() if v.size), default=1.0) or 1.0
        left = max(display_width(str(lab)) for lab in self.labels)
        name = max((display_width(k) for k in values), default=0) if len(values) > 1 else 0
        room = max(10, width - left - name - 12)
        lines = [_title(self.options)]
        for i, lab in enumerate(self.labels):
            for j, (key, v) in enumerate(values.items()):
                head = pad(str(lab) if j == 0 else "", left)
                who = f" {pad(key, name)}" if name else ""
                lines.append(f"{head}{who} {_bar(abs(v[i]) / top * room)} {v[i]:.2f}")
        return "\n".join(line for line in lines if line is not None)

    __call__ = figure


@dataclass
class Curve:
    """Curves over steps (a loss, a perplexity): one line per series; a series is its values
    (at ``x``, default 1, 2, ...) or a pair (its steps, its values)."""

    series: dict[str, Sequence[float]]
    x: Sequence[float] | None = None
    options: dict = field(default_factory=dict)

    def figure(self):
        from matplotlib.figure import Figure

        from ..viz import use_cjk_font
        from ..viz.fonts import needs_cjk

        title, xlabel, ylabel = (self.options.get(k, "") for k in ("title", "xlabel", "ylabel"))
        if needs_cjk(title, xlabel, ylabel, list(self.series)):
            use_cjk_font()
        fig = Figure(figsize=(6, 3.4))
        ax = fig.subplots()
        for name, (xs, ys) in self._points().items():
            ax.plot(xs, ys, label=name, lw=1.4, marker="o" if len(ys) <= 20 else None, ms=3)
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        if self.options.get("log"):
            ax.set_yscale("log")
        if len(self.series) > 1 or next(iter(self.series), ""):
            ax.legend()
        ax.grid(alpha=0.3)
        fig.tight_layout()
        return fig

    def text(self, width: int = WIDTH) -> str:
        name = max(display_width(k) for k in self.series)
        room = max(10, width - name - 24)
        lines = [_title(self.options)]
        for key, (_, ys) in self._points().items():
            ys = np.asarray(ys, dtype=float)
            at = spread(len(ys), room)
            lo, hi = np.nanmin(ys), np.nanmax(ys)
            spark = "".join(SPARKS[level(ys[i], lo, hi, len(SPARKS))] for i in at)
            lines.append(f"{pad(key, name)} {spark}  {ys[0]:.3g} → {ys[-1]:.3g}")
        xlabel = self.options.get("xlabel")
        if xlabel:
            lines.append(f"{' ' * name} → {xlabel}")
        return "\n".join(line for line in lines if line is not None)

    def _points(self) -> dict[str, tuple[list, list]]:
        out = {}
        for name, values in self.series.items():
            if isinstance(values, tuple) and len(values) == 2:
                out[name] = (list(values[0]), list(values[1]))
            else:
                xs = self.x if self.x is not None else range(1, len(values) + 1)
                out[name] = (list(xs)[: len(values)], list(values))
        return out

    __call__ = figure


AXES = {"xlabel": Text("key", "キー", "键"), "ylabel": Text("query", "クエリ", "查询")}


def heat(w, rows: Sequence[str] | None = None, cols: Sequence[str] | None = None, **kw) -> Heat:
    """``w`` (T, S) as a heatmap, for ``plot``; ``title``, ``xlabel``, ``ylabel``, ``vmin``,
    ``vmax``, ``cmap``, ``annotate`` as ``attnlab.viz.heatmap`` takes them. The axes default to
    key and query in the lesson's language (the caller's ``LANG``)."""
    lang = _caller_lang(1)
    axes = {k: word(lang) for k, word in AXES.items() if k not in kw}
    return Heat(np.asarray(w, dtype=float), rows, cols, {**axes, **kw})


def bars(series: dict[str, Sequence[float]], labels: Sequence[str], **kw) -> Bars:
    """Grouped bars, one group per label, one bar per series, for ``plot`` (``title``,
    ``ylabel``)."""
    return Bars(dict(series), list(labels), kw)


def curve(series, x: Sequence[float] | None = None, **kw) -> Curve:
    """Curves (``{name: values}``, ``{name: (steps, values)}``, or one list of values) over
    steps ``x`` (default 1, 2, ...), for ``plot`` (``title``, ``xlabel``, ``ylabel``,
    ``log=True`` for a log scale)."""
    series = dict(series) if isinstance(series, dict) else {"": list(series)}
    return Curve(series, x, kw)


def plot(name: str, fig: Heat | Bars | Curve | Callable[[], object]) -> None:
    """Show ``fig`` where the learner is: the image in a Jupyter kernel; elsewhere the text
    figure and where to get the image (with ``--plots DIR``: ``name.png`` is saved too)."""
    if _plots["quiet"]:
        return
    folder = _plots["dir"]
    if folder is None and _in_kernel():
        figure = fig()
        _display_png(_png(figure))
        if "matplotlib.pyplot" in sys.modules:  # a pyplot figure would show a second time
            sys.modules["matplotlib.pyplot"].close(figure)
        return
    if hasattr(fig, "text"):
        print(fig.text())
    if folder is not None:
        from ..viz import save

        path = save(fig(), Path(folder) / f"{name}.png")
        _plots["written"].append(path)
        print(f"  [plot] {path}")
    elif not _plots["hinted"]:  # once per lesson: after its first figure
        _plots["hinted"] = True
        found = re.match(r"lesson(\d+)", name)
        hint = HINT(_caller_lang(1)).format(n=found.group(1) if found else "N")
        print(render.fit(hint, render.columns()))


def _png(figure) -> bytes:
    buf = io.BytesIO()
    figure.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def _display_png(data: bytes) -> None:
    from IPython.display import Image, display  # a Jupyter kernel: IPython is there

    display(Image(data=data, format="png"))


def _caller_lang(depth: int = 1) -> str:
    """The ``LANG`` of the lesson code that called ``plot`` (its setup cell sets it)."""
    frame = sys._getframe(depth + 1)
    return str(frame.f_locals.get("LANG", frame.f_globals.get("LANG", "en")))


def _bar(cols: float) -> str:
    whole, part = int(cols), int((cols - int(cols)) * 8)
    return "█" * whole + (EIGHTHS[part] if part else "")


def _title(options: dict) -> str | None:
    return options.get("title") or None


def _axes(options: dict) -> str:
    x, y = options.get("xlabel"), options.get("ylabel")
    if not (x and y):
        return ""
    if display_width(x + y) > len(x + y):  # Japanese or Chinese: full-width brackets and 、
        return f"   （{y} ↓、{x} →）"
    return f"   ({y} ↓, {x} →)"


def _in_kernel() -> bool:
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    return get is not None and get() is not None and "ipykernel" in sys.modules


@contextmanager
def plotting(folder: str | Path | None = None, quiet: bool = False):
    """While inside: ``plot`` prints text figures and saves PNGs into ``folder`` (or shows
    nothing when ``quiet``)."""
    saved = dict(_plots)
    _plots.update(dir=folder, quiet=quiet, written=[], hinted=False)
    try:
        yield _plots["written"]
    finally:
        _plots.update(saved)


__all__ = ["Bars", "Curve", "Heat", "bars", "curve", "heat", "labeled", "matrix", "plot"]
__all__ += ["pad", "plotting", "table"]
