"""Plain text tables (and text heatmaps) for terminal output: one formatter for every command
and lesson.

Column widths count East Asian wide characters (床, 注) as two terminal columns.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np


def wide(ch: str) -> bool:
    """Whether ``ch`` takes two terminal columns (East Asian wide or full-width)."""
    return unicodedata.east_asian_width(ch) in "WF"


def display_width(s: str) -> int:
    """Terminal columns ``s`` takes: wide and full-width characters count two; format
    characters (a word joiner) and combining marks, none."""
    return sum(2 if wide(ch) else 0 if unicodedata.category(ch) in ("Cf", "Mn") else 1 for ch in s)


def pad(s: str, width: int) -> str:
    return s + " " * (width - display_width(s))


def text_table(
    header: Sequence[object],
    rows: Sequence[Sequence[object] | str],
    indent: str = "",
    rule: bool = True,
    width: int | None = None,
    wrap: int = -1,
) -> str:
    """Left-aligned columns two spaces apart, a dashed rule under the header (if ``rule``). A
    header cell with a line break takes as many lines (a long header need not widen the table).
    A row given as a string is a heading: its own line, flush left, outside the columns.

    With ``width``, a table wider than ``width`` terminal columns breaks the text of column
    ``wrap`` (the last by default) at spaces, each continuation on a line of its own under that
    column; when that would leave the column fewer than ``MIN_WRAP`` columns, nothing is broken.
    """
    cells = [str(c).split("\n") for c in header]
    depth = max((len(c) for c in cells), default=1)
    head = [[c[k] if k < len(c) else "" for c in cells] for k in range(depth)]
    body = [r if isinstance(r, str) else [str(c) for c in r] for r in rows]
    table = [*head, *(r for r in body if not isinstance(r, str))]
    widths = [max(display_width(r[i]) for r in table) for i in range(len(cells))]
    room = _room(widths, wrap, width - display_width(indent)) if width else None
    if room is not None:
        widths[wrap] = room

    def line(r: list[str]) -> str:
        return indent + "  ".join(pad(c, w) for c, w in zip(r, widths, strict=True)).rstrip()

    lines = [line(r) for r in head]
    if rule:
        lines.append(indent + "  ".join("-" * w for w in widths))
    for r in body:
        lines += [r] if isinstance(r, str) else [line(x) for x in _broken(r, wrap, room)]
    return "\n".join(lines)


MIN_WRAP = 12  # the narrowest a wrapped column gets: any narrower, the table is left wide


def _room(widths: list[int], wrap: int, width: int) -> int | None:
    """How wide column ``wrap`` may be for the table to fit ``width`` (None: it fits as it is,
    or would leave that column narrower than ``MIN_WRAP``)."""
    over = sum(widths) + 2 * (len(widths) - 1) - width
    room = widths[wrap] - over
    return room if over > 0 and room >= MIN_WRAP else None


def _broken(row: list[str], wrap: int, room: int | None) -> list[list[str]]:
    """``row``, then one row per continuation of its ``wrap`` cell broken to ``room`` columns."""
    if room is None:
        return [row]
    first, *rest = fit(row[wrap], room).split("\n")
    out = [[*row]]
    out[0][wrap] = first
    for part in rest:
        out.append([""] * len(row))
        out[-1][wrap] = part
    return out


# a line's label: its indent and a short first word followed by two spaces ("  FAIL  ")
_LABEL = re.compile(r"\s+\S{1,12} {2,}|\s*")
_CLOSING = "、。，．；：！？）」』】〉》”’)]"  # never the first character of a line
_OPENING = "(（「『【〈《“‘["  # never the last character of a line


def fit(text: str, width: int) -> str:
    """``text`` with every line wider than ``width`` terminal columns broken into lines that
    fit, at spaces (or between CJK characters), each continuation indented under the text
    after the line's label ("  FAIL  ..." continues under the text after FAIL). No character
    but the spaces at a break is added or lost; a word wider than the room is cut."""
    return "\n".join(_fit_line(line, width) for line in text.split("\n"))


def _fit_line(line: str, width: int) -> str:
    if display_width(line) <= width:
        return line
    label = _LABEL.match(line).group(0)
    indent = " " * min(display_width(label), width // 2)
    rows, row = [], label
    for piece in _pieces(line[len(label) :]):
        if display_width(row + piece.rstrip()) > width and row.strip():
            rows.append(row.rstrip())
            row, piece = indent, piece.lstrip()
        while display_width(row + piece.rstrip()) > width:  # wider than a whole line: cut
            room = max(1, width - display_width(row))
            fits = (i for i in range(len(piece), 0, -1) if display_width(piece[:i]) <= room)
            cut = next(fits, 1)  # (a wide character where one column is left: alone)
            rows.append(row + piece[:cut])
            row, piece = indent, piece[cut:]
        row += piece
    return "\n".join([*rows, row.rstrip()])


def _pieces(text: str) -> list[str]:
    """What a line may break between: a run of narrow characters, or one ``wide`` character
    (Japanese and Chinese break between any two), each with the spaces after it; closing
    punctuation stays with what it closes, an opening bracket with what it opens."""
    out: list[str] = []
    for ch in text:
        if out and (ch.isspace() or ch in _CLOSING or out[-1][-1] in _OPENING):
            out[-1] += ch
        elif not out or out[-1][-1].isspace() or wide(ch) or wide(out[-1][-1]):
            out.append(ch)
        else:
            out[-1] += ch
    return out


SHADES = "·░▒▓█"  # a heatmap cell: · at or below the lowest value, then four steps up to █


def level(v: float, lo: float, hi: float, levels: int) -> int:
    """Which of ``levels`` equal steps from ``lo`` to ``hi`` the value ``v`` falls in."""
    if not np.isfinite(v):
        return 0
    return int(np.clip((v - lo) / max(hi - lo, 1e-12) * levels, 0, levels - 1))


def shade(v: float, lo: float, hi: float) -> str:
    """One heatmap cell: blank for a value that is not a number, · at or below ``lo``."""
    if not np.isfinite(v):
        return " "
    return SHADES[0] if v <= lo else SHADES[1 + level(v, lo, hi, len(SHADES) - 1)]


def shade_legend(lo: float, hi: float) -> str:
    """What each shade stands for, as one line: ``· ≤0.00  ░ <0.25 ... █ ≥0.75``."""
    steps = len(SHADES) - 1
    bounds = [lo + (hi - lo) * k / steps for k in range(1, steps)]
    parts = [f"{SHADES[0]} ≤{lo:.2f}"]
    parts += [f"{c} <{b:.2f}" for c, b in zip(SHADES[1:], bounds, strict=False)]
    return "  ".join([*parts, f"{SHADES[-1]} ≥{bounds[-1]:.2f}"])


def spread(n: int, most: int | None) -> list[int]:
    """At most ``most`` indices spread evenly over range(n) (all of them for None)."""
    if most is None or n <= most:
        return list(range(n))
    return sorted(set(np.linspace(0, n - 1, most).astype(int)))


def text_heatmap(
    w,
    rows: Sequence[str] | None = None,
    cols: Sequence[str] | None = None,
    lo: float | None = 0.0,
    hi: float | None = None,
    width: int | None = 72,
    most: tuple[int | None, int | None] = (24, 32),
) -> str:
    """A (T, S) matrix in characters: one line per row (its label on the left), one cell per
    column under its label, and the shades' legend last. ``lo``/``hi``: the range the shades
    span (None: the data's). At most ``most`` rows are shown, spread evenly; columns too, but
    when every column fits ``width`` at one character each, all are shown (a positional
    encoding's sine and cosine columns alternate: every other one would hide half). When the
    column labels would pass ``width``, the columns are numbered (last digit). Labels longer
    than one character get a space between them ("suis un", not "suisun")."""
    w = np.atleast_2d(np.asarray(w, dtype=float))
    rows_at, cols_at = spread(w.shape[0], most[0]), spread(w.shape[1], most[1])
    lo = float(np.nanmin(w)) if lo is None else lo
    hi = hi if hi is not None else max(float(np.nanmax(w)), lo + 1e-12)
    names, heads = _labels(rows, rows_at), _labels(cols, cols_at)
    left = max((display_width(n) for n in names), default=1)
    gap = 1 if any(len(h) > 1 for h in heads) and cols is not None else 0
    cell = max(2, *(display_width(h) + gap for h in heads))
    if width is not None and len(cols_at) < w.shape[1] and left + 1 + w.shape[1] <= width:
        cols_at, cell = list(range(w.shape[1])), 1  # every column, one character each
        heads = [str(c % 10) for c in cols_at]
    elif width is not None and cell * len(cols_at) > width - 8:  # too wide: numbered columns
        cell, heads = 2, [str(c % 10) for c in cols_at]
    lines = [" " * (left + 1) + "".join(pad(h, cell) for h in heads).rstrip()]
    for r, name in zip(rows_at, names, strict=True):
        lines.append(
            f"{pad(name, left)} " + "".join(shade(w[r, c], lo, hi) * cell for c in cols_at)
        )
    return "\n".join([*lines, " " * (left + 1) + shade_legend(lo, hi)])


def _labels(names: Sequence[str] | None, at: list[int]) -> list[str]:
    """The labels at ``at`` (a space shown as ␣; the index where there is no label)."""
    labels = [str(names[i]) if names is not None and i < len(names) else str(i) for i in at]
    return ["␣" if x == " " else x for x in labels]
