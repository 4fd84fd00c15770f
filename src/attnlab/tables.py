"""Plain text tables (and text heatmaps) for terminal output: one formatter for every command
and lesson.

Column widths count East Asian wide characters (床, 注) as two terminal columns.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence


def display_width(s: str) -> int:
    """Terminal columns ``s`` takes: wide and full-width characters count two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def pad(s: str, width: int) -> str:
    return s + " " * (width - display_width(s))


def text_table(
    header: Sequence[object],
    rows: Sequence[Sequence[object]],
    indent: str = "",
    rule: bool = True,
) -> str:
    """Left-aligned columns two spaces apart, a dashed rule under the header (if ``rule``)."""
    table = [[str(c) for c in header], *[[str(c) for c in r] for r in rows]]
    widths = [max(display_width(r[i]) for r in table) for i in range(len(table[0]))]
    lines = [
        indent + "  ".join(pad(c, w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in table
    ]
    if rule:
        lines.insert(1, indent + "  ".join("-" * w for w in widths))
    return "\n".join(lines)


SHADES = " ·:-=+*#%@"  # a text heatmap's cells, from weight 0 (blank) to 1 (@)


def text_heatmap(weights, inp: str, out: str) -> str:
    """An alignment (len(out), len(inp)) in characters: one row per output character, one column
    per input one. Full-width input characters (年, 月) take two terminal columns, so their
    cells do too."""
    cols = ["␣" if c == " " else c for c in inp]
    widths = [display_width(c) for c in cols]
    lines = ["    " + " ".join(cols)]
    for i, ch in enumerate(out):
        cells = (
            SHADES[min(len(SHADES) - 1, int(float(x) * len(SHADES)))].ljust(wd)
            for x, wd in zip(weights[i], widths, strict=True)
        )
        lines.append(f" {ch}  " + " ".join(cells))
    return "\n".join(lines)


def shade_legend() -> str:
    """What a text heatmap's characters mean, as one line."""
    steps = len(SHADES)
    parts = [f"{'␣' if c == ' ' else c} <{(i + 1) / steps:.1f}" for i, c in enumerate(SHADES[:-1])]
    return "shades: " + "  ".join(parts) + f"  {SHADES[-1]} >={(steps - 1) / steps:.1f}"
