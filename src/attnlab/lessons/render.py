"""The lesson on a terminal, drawn by ``rich``: code highlighted behind a gutter, prose as
Markdown (tables print as tables), headings and panels. Colours only on a terminal: none when
piped or with ``NO_COLOR`` set, and then the text is plain (no escape codes, no markup)."""

from __future__ import annotations

import io
import os
import re
import shutil
import unicodedata

from rich import box
from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

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
    """The code, highlighted, every line behind the gutter (never wrapped)."""
    shown = Syntax(text, "python", theme=THEME).highlight(text.rstrip("\n"))
    shown.rstrip()
    for line in shown.split("\n", allow_blank=True):
        line.rstrip()
        con.print(Text.assemble((GUTTER, "dim"), line), no_wrap=True, crop=False, soft_wrap=True)


def prose(con: Console, text: str) -> None:
    """Markdown: paragraphs wrapped to the terminal, tables as tables, ``code`` and **bold**."""
    if not text.strip():
        return
    with con.capture() as captured:
        con.print(Markdown(wrap_wide(join_lines(text), con.width - 2)))
    shown = captured.get()
    if not con.is_terminal:  # plain text: no padding to the console's width
        shown = "".join(line.rstrip() + "\n" for line in shown.splitlines())
    output(con, shown)


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


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


def join_lines(text: str) -> str:
    """Paragraph lines joined into one line, without the space Markdown would put between
    two CJK characters (a Japanese or Chinese sentence broken over two source lines)."""
    out: list[str] = []
    for line in text.splitlines():
        prev = out[-1] if out else ""
        if out and not _BLOCK.match(line) and prev.strip() and not _BLOCK.match(prev):
            last, first = prev.rstrip()[-1], line.lstrip()[0]
            # no space between two CJK characters, nor after full-width punctuation (。、：)
            sep = "" if _wide(last) and (_wide(first) or last in NO_BREAK_BEFORE) else " "
            out[-1] = prev.rstrip() + sep + line.lstrip()
        else:
            out.append(line)
    return "\n".join(out)


CJK = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_CJK_BREAK = re.compile(f"(?<=[{CJK}])\n(?=[{CJK}])|(?<=[。、，：；！？])\n(?=[^\\s|#>*+-])")


def join_cjk(text: str) -> str:
    """Markdown for a page or a notebook with the line breaks a browser would show as a
    stray space joined: between two Chinese or Japanese characters, or after 。、：
    (these languages put no space there). Code blocks are left as they are."""
    parts = re.split(r"(```.*?```)", text, flags=re.S)
    return "".join(p if p.startswith("```") else _CJK_BREAK.sub("", p) for p in parts)


NO_BREAK_BEFORE = set("。、，．,.）)」』：:；;！!？?・ー〕】%")
NO_BREAK_AFTER = set("（(「『〔【")
_TOKEN = re.compile(r"`[^`]*`|[A-Za-z0-9_.,:;!?'\"()\[\]{}<>=+\-*/%^|~#@$&\\]+\s*|\s+|.")
_ITEM = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)")


def _width(s: str) -> int:
    return sum(2 if _wide(ch) else 1 for ch in s)


def wrap_wide(text: str, width: int) -> str:
    """Paragraphs and list items holding CJK text broken to ``width`` columns between any two
    characters (never before 。 or after 「), with Markdown hard breaks: a terminal renderer
    breaks lines only at spaces, which leaves Japanese and Chinese lines ragged."""
    out = []
    for line in text.split("\n"):
        if not any(_wide(ch) for ch in line) or line.lstrip().startswith(("|", "#", "`")):
            out.append(line)
            continue
        item = _ITEM.match(line)
        lead = item.group(1) if item else ""
        rows = _break(line[len(lead) :], width - len(lead))
        out.append(("\\\n" + " " * len(lead)).join([lead + rows[0], *rows[1:]]))
    return "\n".join(out)


def _break(text: str, width: int) -> list[str]:
    rows, row = [], []  # row: its tokens
    for token in _TOKEN.findall(text):
        if row and _width("".join(row) + token.rstrip()) > width:
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


__all__ = ["GUTTER", "code", "code_block", "code_lines", "console", "heading", "join_lines"]
__all__ += ["join_cjk", "output", "panel", "prose", "wants_colour", "wrap_wide"]
