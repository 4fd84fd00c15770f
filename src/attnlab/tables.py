"""Plain text tables for terminal output: one formatter for every command and lesson.

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
