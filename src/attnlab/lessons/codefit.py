"""Code shown in a terminal narrower than its lines, as the same Python re-flowed to fit.

A terminal hard-wraps a line wider than itself wherever the column runs out, inside a word
("twic" / "e") and with no indentation, so a lesson shows each too-wide line another way:

- a trailing comment that makes the line too wide moves onto its own line(s) just above it, at
  the line's indentation, broken between words (or between CJK characters) if it is long;
- code still too wide breaks between two tokens that a space separates, continued four spaces
  deeper: inside brackets as it is (Python joins those lines), elsewhere after a backslash.

The result is the same program (the same syntax tree and the same comments), so what the learner
reads runs as written; lines that fit, and everything inside a string, stay as they are. Only the
terminal view changes: the script and the notebook keep the code as the lesson's source has it.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable

from attnlab.tables import display_width

DEEPER = "    "  # a continued line's extra indentation
SOFT = "、。，：；）"  # CJK punctuation a row may end after
NO_BREAK_BEFORE = "、。，．：；！？）」』】》〉・ー"  # no row of a CJK string starts with these
NBSP = "\u00a0"  # a space ``wrap`` never breaks at (it gives back a plain space)
_GROUP = re.compile(r"\[[^\[\]\n]{1,24}\]|\([^()\n]{1,24}\)")  # a short [...] or (...)
_SKIP = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}


def fit_code(text: str, width: int, wrap: Callable[[str, int], str]) -> str:
    """``text`` (Python source) with every line at most ``width`` display columns where a
    comment move or a break between tokens can make it so. ``wrap(words, width)`` breaks a
    comment's words into lines. Source that does not tokenize is returned unchanged."""
    lines = text.split("\n")
    if all(display_width(line) <= width for line in lines):
        return text
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):  # not whole Python (a fragment): shown as is
        return text
    spanned, on_line = _lines_of(tokens)
    docs = _docstring_lines(tokens)
    out: list[str] = []
    for number, line in enumerate(lines, start=1):
        if display_width(line) <= width:
            out.append(line)
        elif number in docs:
            out += _fit_docstring_line(line, docs[number], width, wrap)
        elif number in spanned:
            out.append(line)
        else:
            out += _fit_line(line, on_line.get(number, []), width, wrap)
    return "\n".join(out)


def _docstring_lines(tokens: list[tokenize.TokenInfo]) -> dict[int, str]:
    """The lines of each docstring (a triple-quoted string that is a statement of its own),
    each with the indentation its continued rows take: the statement's."""
    out: dict[int, str] = {}
    for before, tok, after in zip(tokens, tokens[1:], tokens[2:], strict=False):
        body = tok.string.lstrip("rRuU")
        if (
            tok.type == tokenize.STRING
            and body[:3] in ('"""', "'''")
            and before.type in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT)
            and after.type == tokenize.NEWLINE
        ):
            indent = " " * tok.start[1]
            out.update(dict.fromkeys(range(tok.start[0], tok.end[0] + 1), indent))
    return out


def _fit_docstring_line(line: str, indent: str, width: int, wrap) -> list[str]:
    """A line of a docstring broken between words (its text gains line breaks only)."""
    own = line[: len(line) - len(line.lstrip())]
    rows = wrap(_glued(line.strip()), max(width - display_width(own or indent), 20)).split("\n")
    if len(rows) > 1 and rows[-1].strip() in ('"""', "'''"):  # never the quotes alone
        rows[-2:] = [rows[-2] + rows[-1].strip()]
    return [own + rows[0], *((own or indent) + r for r in rows[1:])]


def _glued(words: str) -> str:
    """``words`` with the spaces a row should not break at made non-breaking: inside a short
    ``[...]`` or ``(...)`` ("PE[pos, 2i+1]") and between a name and its shape ("W_k (d_k, d_a)")."""
    words = _GROUP.sub(lambda m: m.group(0).replace(" ", NBSP), words)
    return re.sub(r"(?<=\w) (?=\()", NBSP, words)


def _lines_of(tokens: list[tokenize.TokenInfo]) -> tuple[set[int], dict[int, list]]:
    """The lines a token runs onto from an earlier line (inside a string: left alone), and per
    line its tokens, each with the bracket depth before it."""
    spanned: set[int] = set()
    on_line: dict[int, list] = {}
    depth = in_fstring = 0  # (Python 3.12 splits an f-string into tokens: no break inside)
    for tok in tokens:
        if tok.end[0] > tok.start[0] and tok.type not in (tokenize.NL, tokenize.NEWLINE):
            spanned.update(range(tok.start[0], tok.end[0] + 1))  # a string over several lines
        name = tokenize.tok_name[tok.type]
        in_fstring -= name == "FSTRING_END"
        on_line.setdefault(tok.start[0], []).append((tok, depth, in_fstring > 0))
        in_fstring += name == "FSTRING_START"
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
    return spanned, on_line


def _fit_line(line: str, tokens: list, width: int, wrap: Callable[[str, int], str]) -> list[str]:
    """One too-wide line as lines that fit (as far as its tokens allow)."""
    indent = line[: len(line) - len(line.lstrip())]
    comment = next((t for t, _, _ in tokens if t.type == tokenize.COMMENT), None)
    above: list[str] = []
    if comment is not None:
        words = comment.string[1:].strip()
        room = max(width - display_width(indent) - 2, 20)
        above = [f"{indent}# {row}".rstrip() for row in wrap(_glued(words), room).split("\n")]
        line = line[: comment.start[1]].rstrip()
        if not line.strip():  # a comment on a line of its own
            return above
    code = [(t, d, f) for t, d, f in tokens if t.type not in _SKIP]
    return above + _break_code(line, code, indent, width)


def _break_code(line: str, code: list, indent: str, width: int) -> list[str]:
    """``line`` broken before tokens that a space separates from the one before, or inside a
    string after a space (``"a b"`` as ``"a "`` and ``"b"``, which Python joins again), each
    row as long as fits; a break outside brackets ends its row with a backslash."""
    points = sorted(_token_points(line, code) + _string_points(line, code))
    rows, start, lead = [], 0, ""
    while display_width(lead + line[start:]) > width:
        later = [p for p in points if p[0] > start]
        if not later:
            break
        col, depth, close, reopen = _best(line, start, lead, later, width)
        rows.append(lead + _row(line, start, col, depth, close))
        start, lead = col, indent + DEEPER + reopen
    return [*rows, lead + line[start:]]


def _token_points(line: str, code: list) -> list[tuple]:
    """(column, bracket depth, "", "") before each token a space separates from the last."""
    return [
        (tok.start[1], depth, "", "")
        for tok, depth, in_fstring in code[1:]
        if not in_fstring and tok.start[1] > 0 and line[tok.start[1] - 1] == " "
    ]


def _string_points(line: str, code: list) -> list[tuple]:
    """(column, depth, quote, prefix + quote) after each space inside a one-line string in
    brackets, outside any ``{...}`` of an f-string: the row ends the string there, the next
    reopens it."""
    points = []
    for first, last, depth in _strings(code):
        text = line[first:last]
        prefix = len(text) - len(text.lstrip("rRbBfFuU"))
        quote = text[prefix]
        if depth == 0 or text[prefix : prefix + 3] == quote * 3:
            continue
        braces, k = 0, prefix + 1
        while k < len(text) - 1:
            two = text[k : k + 2]
            if "f" in text[:prefix].lower() and two in ("{{", "}}"):
                k += 2
                continue
            braces += (text[k] == "{") - (text[k] == "}") if "f" in text[:prefix].lower() else 0
            if not braces and _splits(text[prefix + 1 : k + 1], text[k + 1], quote):
                points.append((first + k + 1, depth, quote, text[:prefix] + quote))
            k += 1
    return points


def _splits(before: str, after: str, quote: str) -> bool:
    """A string may break between ``before`` and ``after`` (its next character): after a space,
    or between two CJK characters, once something other than spaces came before."""
    if not before.strip() or after == quote:
        return False
    if before[-1] in " " + SOFT:
        return after != " "
    return _wide(before[-1]) and _wide(after) and after not in NO_BREAK_BEFORE


def _wide(ch: str) -> bool:
    return display_width(ch) == 2


def _strings(code: list) -> list[tuple[int, int, int]]:
    """(first column, end column, depth) of each one-line string (f-strings too, which Python
    3.12 gives as FSTRING_START ... FSTRING_END)."""
    out, opened = [], []
    for tok, depth, _ in code:
        name = tokenize.tok_name[tok.type]
        if tok.type == tokenize.STRING and tok.start[0] == tok.end[0]:
            out.append((tok.start[1], tok.end[1], depth))
        elif name == "FSTRING_START":
            opened.append((tok, depth))
        elif name == "FSTRING_END" and opened:
            start, depth0 = opened.pop()
            if not opened and start.start[0] == tok.end[0]:
                out.append((start.start[1], tok.end[1], depth0))
    return out


def _best(line: str, start: int, lead: str, later: list, width: int) -> tuple:
    """Where the row from ``start`` ends: among the breaks that fit and fill at least a third
    of the row, the one outside the most brackets (the furthest of those), as a person would
    break ``x = f(a, g(b)) / 4`` after ``f(a,`` rather than inside ``g(``."""
    fitting = [p for p in later if display_width(lead + _row(line, start, *p[:3])) <= width]
    if not fitting:
        return later[0]
    full = [p for p in fitting if display_width(lead + line[start : p[0]]) >= width // 3]
    if not full:
        return fitting[-1]
    outer = [p for p in full if p[1] == min(q[1] for q in full)]
    soft = [  # before a comprehension's for/if; after a comma (code), a space or CJK
        p  # punctuation (a string), 60% full
        for p in outer
        if (not p[2] and re.match(r"(for|if)\b", line[p[0] :]))
        or (
            (_after_comma(line, p[0]) if not p[2] else line[p[0] - 1] in " " + SOFT)
            and display_width(lead + line[start : p[0]]) >= width * 3 // 5
        )
    ]
    return max(soft or outer, key=lambda p: p[0])


def _after_comma(line: str, col: int) -> bool:
    """``col`` follows a comma that is not inside a ``for`` target (``for f, b_ in``: a row
    never ends between ``f,`` and ``b_``)."""
    before = line[:col].rstrip()
    if before[-1:] != ",":
        return False
    target = re.search(r"\bfor\b(?!.*\bfor\b)(.*)$", before)  # since the last `for`
    return target is None or re.search(r"\bin\b", target.group(1)) is not None


def _row(line: str, start: int, end: int, depth: int, close: str) -> str:
    """The row from ``start`` to ``end``: a string's piece closed with its quote; else the
    code, with a backslash if the break is outside brackets."""
    if close:
        return line[start:end] + close
    row = line[start:end].rstrip()
    return row if depth > 0 else row + " \\"
