"""Code on the terminal: a gutter, and colours when the output is a terminal (none when piped,
or with NO_COLOR set)."""

from __future__ import annotations

import io
import keyword
import os
import token
import tokenize

GUTTER = "│ "
COLOURS = {"keyword": "1;34", "string": "32", "comment": "2;37", "number": "36"}


def wants_colour(out) -> bool:
    return hasattr(out, "isatty") and out.isatty() and not os.environ.get("NO_COLOR")


def _kind(tok: tokenize.TokenInfo) -> str | None:
    if tok.type == token.NAME and keyword.iskeyword(tok.string):
        return "keyword"
    if tok.type == token.STRING or tok.type in _FSTRING:
        return "string"
    return {token.COMMENT: "comment", token.NUMBER: "number"}.get(tok.type)


_FSTRING = {
    getattr(token, n)
    for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
    if hasattr(token, n)
}


def highlight(code: str) -> str:
    """``code`` with ANSI colours for keywords, strings, comments and numbers."""
    lines = code.splitlines()
    spans: dict[int, list[tuple[int, int, str]]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code + "\n").readline):
            kind = _kind(tok)
            if kind and tok.start[0] == tok.end[0]:
                spans.setdefault(tok.start[0] - 1, []).append((tok.start[1], tok.end[1], kind))
            elif kind:  # a multi-line string: colour each of its lines whole
                for row in range(tok.start[0] - 1, tok.end[0]):
                    spans.setdefault(row, []).append((0, len(lines[row]), kind))
    except (tokenize.TokenError, SyntaxError, IndexError):
        return code
    out = []
    for row, line in enumerate(lines):
        pos, parts = 0, []
        for start, end, kind in sorted(spans.get(row, [])):
            if start < pos:
                continue
            parts += [line[pos:start], f"\x1b[{COLOURS[kind]}m{line[start:end]}\x1b[0m"]
            pos = end
        out.append("".join(parts) + line[pos:])
    return "\n".join(out)


def code_block(code: str, colour: bool) -> str:
    """The code with a gutter on every line (coloured on a terminal)."""
    shown = highlight(code) if colour else code
    gutter = f"\x1b[2m{GUTTER}\x1b[0m" if colour else GUTTER
    return "\n".join(gutter + line for line in shown.splitlines())


def code_lines(printed: str) -> list[str]:
    """The code lines in a printed lesson (the lines with the gutter), gutter removed."""
    return [ln[len(GUTTER) :] for ln in printed.splitlines() if ln.startswith(GUTTER)]


__all__ = ["GUTTER", "code_block", "code_lines", "highlight", "wants_colour"]
