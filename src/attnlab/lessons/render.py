"""The lesson on a terminal, drawn by ``rich``: code highlighted behind a gutter, prose as
Markdown (tables print as tables), headings and panels. Colours only on a terminal: none when
piped or with ``NO_COLOR`` set, and then the text is plain (no escape codes, no markup)."""

from __future__ import annotations

import functools
import io
import os
import re
import shutil
from typing import ClassVar

from rich import box
from rich.console import Console
from rich.markdown import ListItem, Markdown, TableElement
from rich.panel import Panel
from rich.segment import Segment
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from attnlab.lessons import codefit
from attnlab.tables import display_width, wide

GUTTER = "│ "
THEME = "ansi_dark"  # the terminal's own palette: readable on dark and light backgrounds
MAX_WIDTH = 100
PIPED_WIDTH = 80


def wants_colour(out) -> bool:
    return hasattr(out, "isatty") and out.isatty() and not os.environ.get("NO_COLOR")


def console(out) -> Console:
    """A console writing to ``out``: styled on a terminal, plain text when piped."""
    colour = wants_colour(out)
    width = min(MAX_WIDTH, shutil.get_terminal_size((PIPED_WIDTH, 24)).columns)
    return Console(
        file=out,
        force_terminal=colour,
        no_color=not colour,
        color_system="auto" if colour else None,
        width=width if colour else PIPED_WIDTH,
        highlight=False,
        markup=False,
        emoji=False,
    )


def code(con: Console, text: str) -> None:
    """The code, highlighted, every line behind the gutter; a line wider than the console
    shown as the same Python re-flowed to fit (``codefit``), never cut or wrapped mid-word."""
    text = codefit.fit_code(text.rstrip("\n"), con.width - len(GUTTER), fit)
    shown = Syntax(text, "python", theme=THEME).highlight(text)
    shown.rstrip()
    for line in shown.split("\n", allow_blank=True):
        line.rstrip()
        con.print(Text.assemble((GUTTER, "dim"), line), no_wrap=True, crop=False, soft_wrap=True)


def prose(con: Console, text: str) -> None:
    """Markdown: paragraphs wrapped to the terminal, tables as tables, ``code`` and **bold**."""
    if not text.strip():
        return
    with con.capture() as captured:
        con.print(_Markdown(wrap_wide(join_lines(text), con.width - 2)))
    shown = re.sub(r"\n(?:[ \t]*\n){2,}", "\n\n", captured.get())  # one blank line, not three
    shown = re.sub(r"^(?:[ \t]*\n)+", "", shown)  # (a table starts with blank lines)
    if not con.is_terminal:  # plain text: no padding to the console's width
        shown = "".join(line.rstrip() + "\n" for line in shown.splitlines())
    output(con, shown)


def columns(out=None) -> int:
    """The columns text printed to ``out`` may take: the terminal's (at most ``MAX_WIDTH``),
    ``PIPED_WIDTH`` when piped."""
    if out is not None and not wants_colour(out):
        return PIPED_WIDTH
    return min(MAX_WIDTH, shutil.get_terminal_size((PIPED_WIDTH, 24)).columns)


CODE_SPAN = re.compile(r"`([^`\n]+)`")


def plain(text: str) -> str:
    """Markdown's code spans as a terminal shows them: the code without its backticks (the
    prose renderer does the same; a notebook keeps them, where they render as code)."""
    return CODE_SPAN.sub(r"\1", text)


def fit(text: str, width: int = PIPED_WIDTH) -> str:
    """Plain text (a hint, a quiz question, a grader's line) broken to ``width`` columns
    between words or between two CJK characters, never inside a word; a wrapped line keeps
    the indentation (and a list marker's room) of the line it continues."""
    out = []
    for line in text.split("\n"):
        if display_width(line) <= width:
            out.append(line)
            continue
        lead = re.match(r"\s*(?:(?:[-*+]|\(?[a-z0-9]\)|\d+[.)])\s+)?", line).group(0)
        rows = _break(line[len(lead) :], max(width - display_width(lead), 10))
        out += [lead + rows[0], *(" " * display_width(lead) + r for r in rows[1:])]
    return "\n".join(out).replace(NBSP, " ")


def heading(con: Console, text: str) -> None:
    con.print(Text(f"\n== {text}", style="bold"), soft_wrap=True)


def panel(con: Console, text: str, title: str = "") -> None:
    """Words set apart in a box (the lesson's title, the exercise's turn)."""
    con.print(Panel(Text(text), box.HEAVY, title=title or None, expand=False, title_align="left"))


def output(con: Console, printed: str) -> None:
    """What the code printed, exactly as it printed it."""
    con.file.write(printed)
    con.file.flush()


def code_block(text: str, colour: bool) -> str:
    """The code as ``code`` prints it, as a string (with colours, or plain)."""
    buf = io.StringIO()
    con = console(buf)
    if colour:
        con = Console(file=buf, force_terminal=True, color_system="standard", width=MAX_WIDTH)
    code(con, text)
    return buf.getvalue().rstrip("\n")


def code_lines(printed: str) -> list[str]:
    """The code lines in a printed lesson (the lines with the gutter), gutter removed."""
    return [ln[len(GUTTER) :] for ln in printed.splitlines() if ln.startswith(GUTTER)]


_BLOCK = re.compile(r"^\s*([|#>]|```|[-*+]\s|\d+[.)]\s|$)")  # a line that is not paragraph text


def join_lines(text: str) -> str:
    """Paragraph and list-item lines joined into one line, without the space Markdown would
    put between two CJK characters (a Japanese or Chinese sentence broken over two source
    lines, a list item's continuation line, a line that starts with “ after Chinese text)."""
    out: list[str] = []
    for line in text.splitlines():
        prev = out[-1] if out else ""
        if out and not _BLOCK.match(line) and prev.strip() and _continues(prev):
            last, first = prev.rstrip()[-1], line.lstrip()[0]
            out[-1] = prev.rstrip() + _separator(last, first) + line.lstrip()
        else:
            out.append(line)
    return "\n".join(out)


def _continues(prev: str) -> bool:
    """Whether a line after ``prev`` belongs to the same paragraph or list item."""
    return not _BLOCK.match(prev) or bool(_ITEM.match(prev))


QUOTES = "“”‘’"  # curly quotes: ambiguous width, set tight against Chinese text


def _separator(last: str, first: str) -> str:
    """The space between two joined lines: none between two CJK characters (a curly quote
    next to one counts as one), nor after full-width punctuation (。、：); a space after キー
    or ・ before Latin text ("キー K"): they are not punctuation."""
    if not (wide(last) or wide(first)):
        return " "
    tight = (wide(last) or last in QUOTES) and (wide(first) or first in QUOTES)
    return "" if tight or (wide(last) and last in CLOSING) else " "


CJK = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_CJK_BREAK = re.compile(
    f"(?<=[{CJK}{QUOTES}])\n[ \t]*(?=[{CJK}])|(?<=[{CJK}])\n[ \t]*(?=[{QUOTES}])"
    f"|(?<=[。、，：；！？])\n(?=[^\\s|#>*+-])"
)


def join_cjk(text: str) -> str:
    """Markdown for a page or a notebook with the line breaks a browser would show as a
    stray space joined: between two Chinese or Japanese characters, or after 。、：
    (these languages put no space there). Code blocks are left as they are."""
    parts = re.split(r"(```.*?```)", text, flags=re.S)
    return "".join(p if p.startswith("```") else _CJK_BREAK.sub("", p) for p in parts)


SMALL_KANA = "ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ"  # never first on a line (kinsoku)
# never first on a line: the CJK marks a code line's string never starts a row with either
# (codefit's), and ASCII ones; ᵀ keeps "Kᵀ" whole
NO_BREAK_BEFORE = set(codefit.NO_BREAK_BEFORE + ",.):;!?〕%”’ᵀ" + SMALL_KANA)
NO_BREAK_AFTER = set("（(「『〔【“‘")
CLOSING = set("。、，．：；！？）」』〕】")  # full-width marks no space follows
NBSP = codefit.NBSP  # a space no line breaks at (shapes, formulas, a number and its counter)
WJ = "\u2060"  # word joiner: no break between two CJK characters of a short (…) formula
HOLD = 30  # the widest (…) with CJK text inside that is kept on one line
_PAREN = re.compile(r"\([^()\n]{0,40}\)")
OPS = "=×+→<>≤≥·/−"  # a space around one of these joins a formula ("1 / 0.9", "2i · (−ln 10000)")
_GLUE = re.compile(rf"(?<=[{OPS}])[ ](?=\S)|(?<=\S)[ ](?=[{OPS}][ ])|(?<=[0-9])[ ](?=[{CJK}])")
_TOKEN = re.compile(
    r"`[^`]*`|[A-Za-z0-9_.,:;!?'\"()\[\]{}<>=+\-*/%^|~#@$&\\\u00a0·−]+[^\S\u00a0]*|[^\S\u00a0]+|."
)
_ITEM = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)")


def wrap_wide(text: str, width: int) -> str:
    """Paragraphs and list items holding CJK text broken to ``width`` columns between any two
    characters (never before 。 or after 「), with Markdown hard breaks: a terminal renderer
    breaks lines only at spaces, which leaves Japanese and Chinese lines ragged."""
    out = []
    for line in text.split("\n"):
        if not any(wide(ch) for ch in line) or line.lstrip().startswith(("|", "#", "```")):
            out.append(line)
            continue
        item = _ITEM.match(line)
        lead = item.group(1) if item else ""
        rows = _break(line[len(lead) :], width - len(lead))
        out.append(("\\\n" + " " * len(lead)).join([lead + rows[0], *rows[1:]]))
    return "\n".join(out)


def _glued(text: str) -> str:
    """``text`` with the spaces no line should break at made non-breaking: inside a short
    (…) ("(B, H, T, S)"), around = × + → ("K = X W_K", "T × T") and between a number and the
    CJK counter after it ("4 倍")."""
    text = _PAREN.sub(lambda m: _hold(m.group(0)), text)
    return _GLUE.sub(NBSP, text)


def _hold(group: str) -> str:
    """A short (…) with its spaces non-breaking and, if it is narrow ("(分数 − 最大值)"), a
    word joiner between each two characters, so no CJK break falls inside it either."""
    group = group.replace(" ", NBSP)
    return WJ.join(group) if display_width(group) <= HOLD and any(map(wide, group)) else group


def _break(text: str, width: int) -> list[str]:
    """``text`` as rows of at most ``width`` columns (a token wider than that on its own row)."""
    rows = _break_glued(_glued(text), width)
    return [r.replace(NBSP, " ").replace(WJ, "") for r in rows]


def _tokens(text: str) -> list[str]:
    """The units a line breaks between: a run of Latin text (with the spaces after it), a
    code span, one CJK character; tokens joined by a non-breaking space stay one."""
    out: list[str] = []
    glue = False
    for t in _TOKEN.findall(text):
        if t == WJ and out:
            out[-1] += t
            glue = True
            continue
        if out and (glue or t.startswith(NBSP)):
            out[-1] += t
        else:
            out.append(t)
        glue = t.rstrip(" \t").endswith(NBSP)
    return out


def _break_glued(text: str, width: int) -> list[str]:
    rows, row = [], []  # row: its tokens
    for token in _tokens(text):
        if row and display_width("".join(row) + token.rstrip()) > width:
            while len(row) > 1 and _cannot_break(row[-1], token):  # the last token goes along
                token = row.pop() + token  # (again while it cannot start a line: "）、")
                if token[0].isspace() and len(row) > 1:
                    token = row.pop() + token
            rows.append("".join(row).rstrip())
            row = [token.lstrip()]
        else:
            row.append(token)
    return [*rows, "".join(row).rstrip()]


def _cannot_break(before: str, token: str) -> bool:
    """No line starts with 。 or a list marker (``+ `` would read as a bullet), none ends with 「."""
    return token[0] in NO_BREAK_BEFORE or bool(_ITEM.match(token)) or before[-1] in NO_BREAK_AFTER


class _FittingTable(TableElement):
    """A Markdown table whose cells wrap to fit the console: columns get at least their
    longest unbreakable piece (a word, an identifier, a glued formula, one CJK character)
    and share the rest by how much more they hold; each cell is then broken by ``_break``
    (between words or CJK characters), never cut with "…". rich alone measures a CJK cell
    with no spaces as one word and ellipsizes it."""

    def __rich_console__(self, console: Console, options):
        header = (
            [c.content for c in self.header.row.cells] if self.header and self.header.row else []
        )
        rows = [[c.content for c in r.cells] for r in self.body.rows] if self.body else []
        cells = [header, *rows] if header else rows
        n = max((len(r) for r in cells), default=0)
        table = Table(
            box=box.SIMPLE,
            pad_edge=False,
            style="markdown.table.border",
            show_edge=True,
            collapse_padding=True,
            show_header=bool(header),
        )
        widths = column_widths(
            [[c.plain for c in r] for r in cells], options.max_width - _table_extra(n)
        )
        for i in range(n):
            head = _broken(header[i], widths[i]) if i < len(header) else Text("")
            head.stylize("markdown.table.header")
            table.add_column(head, width=widths[i], overflow="fold")
        for r in rows:
            table.add_row(*(_broken(c, w) for c, w in zip(r, widths, strict=False)))
        yield table


@functools.cache
def _table_extra(n: int) -> int:
    """The columns a ``_FittingTable`` of ``n`` columns takes besides its cells' text
    (measured: a table of one-column cells drawn the same way)."""
    table = Table(box=box.SIMPLE, pad_edge=False, show_edge=True, collapse_padding=True)
    for _ in range(n):
        table.add_column("x", width=1)
    con = Console(width=10 * n + 10, file=io.StringIO(), color_system=None)
    return con.measure(table).maximum - n


SHORT_CELL = 10  # a column this narrow (or a cell this short) is never broken when it fits


def column_widths(cells: list[list[str]], room: int) -> list[int]:
    """Each column's width so that the table fits in ``room`` columns when it can: every
    column at least its longest unbreakable piece, the rest shared by what each holds more."""
    n = max((len(r) for r in cells), default=0)
    col = [[r[i] for r in cells if i < len(r)] for i in range(n)]
    most = [max((display_width(c) for c in cs), default=1) or 1 for cs in col]
    pieces = [
        max((display_width(t.strip()) for c in cs for t in _break(c, 1)), default=1) for cs in col
    ]
    least = [max(p, min(m, SHORT_CELL)) for p, m in zip(pieces, most, strict=True)]
    if sum(most) <= room:
        return most
    widths, left = [0] * n, list(range(n))
    for i in sorted(range(n), key=lambda i: most[i]):  # narrow columns whole, while fair
        if most[i] * len(left) > room - sum(widths):
            break
        widths[i] = most[i]
        left.remove(i)
    spare = room - sum(widths) - sum(least[i] for i in left)
    if spare <= 0:
        return [widths[i] or least[i] for i in range(n)]
    want = {i: most[i] - least[i] for i in left}
    total = sum(want.values()) or 1
    for i in left:
        widths[i] = least[i] + spare * want[i] // total
    for i in sorted(left, key=lambda i: most[i] - widths[i], reverse=True):
        if sum(widths) < room and widths[i] < most[i]:
            widths[i] += 1
    return widths


def _broken(cell: Text, width: int) -> Text:
    """``cell`` (its styles kept) with line breaks where ``_break`` puts them at ``width``."""
    plain = cell.plain
    if display_width(plain) <= width:
        return cell
    starts, at = [], 0
    for row in _break(plain, width):
        at = plain.index(row, at) if row else at
        starts.append(at)
        at += len(row)
    lines = cell.divide(starts[1:])
    for line in lines:
        line.rstrip()
    return Text("\n", justify=cell.justify).join(lines)


class _NumberedItem(ListItem):
    """A numbered list item shown as the source writes it ("1. ", "2. "): rich drops the
    period ("1 用当前状态…"), which reads as a stray number. Same width as rich's own."""

    def render_number(self, console, options, number: int, last_number: int):
        width = len(str(last_number)) + 2
        lines = console.render_lines(
            self.elements, options.update(width=options.max_width - width), style=self.style
        )
        style = console.get_style("markdown.item.number", default="none")
        numeral = Segment(f"{number}.".rjust(width - 1) + " ", style)
        for i, line in enumerate(lines):
            yield numeral if i == 0 else Segment(" " * width, style)
            yield from line
            yield Segment("\n")


class _Markdown(Markdown):
    elements: ClassVar[dict] = {
        **Markdown.elements,
        "table_open": _FittingTable,
        "list_item_open": _NumberedItem,
    }


__all__ = ["GUTTER", "code", "code_block", "code_lines", "console", "heading", "join_lines"]
__all__ += ["column_widths", "columns", "fit", "join_cjk", "output", "panel", "prose"]
__all__ += ["wants_colour", "wrap_wide"]
