"""What ``lessons.render`` shows, asserted as the learner sees it: the console a lesson gets (piped
or a terminal), code behind its gutter, the panel and headings, prose's lists and tables.

Written from mutmut's survivors of render.py (``tools/mutation.sh src/attnlab/lessons/render.py
tests/lessons/test_render80.py tests/lessons/test_codefit.py tests/lessons/test_render_mutants.py``).
Styles are compared with what rich itself prints for the same text in the same style."""

import ast
import io
import os
import re

import pytest
from rich.console import Console
from rich.text import Text

from attnlab.lessons import render
from attnlab.tables import display_width

ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Tty(io.StringIO):
    """A terminal's stream: ``isatty`` says yes."""

    def isatty(self) -> bool:
        return True


def plain(width: int) -> tuple[io.StringIO, Console]:
    out = io.StringIO()
    return out, Console(file=out, width=width, color_system=None, highlight=False, markup=False)


def styled(width: int) -> tuple[io.StringIO, Console]:
    out = Tty()
    return out, Console(file=out, width=width, force_terminal=True, color_system="standard")


def ansi_of(text: str, style: str) -> str:
    """How rich writes ``text`` in ``style`` on a standard-colour terminal (no newline)."""
    out, con = styled(80)
    con.print(Text(text, style=style), end="")
    return out.getvalue()


@pytest.fixture
def terminal(monkeypatch):
    """A terminal of ``columns`` columns, NO_COLOR unset."""
    monkeypatch.delenv("NO_COLOR", raising=False)

    def of(columns: int) -> None:
        size = os.terminal_size((columns, 40))
        monkeypatch.setattr(render.shutil, "get_terminal_size", lambda fallback=None: size)

    return of


def test_piped_output_is_plain_text_80_wide_taken_literally(terminal):
    terminal(120)
    out = io.StringIO()
    con = render.console(out)
    assert not render.wants_colour(out) and not render.wants_colour(object())
    assert con.width == render.columns(out) == 80 and not con.is_terminal
    con.print("[bold]x[/bold] :smile: 42")  # no markup, no emoji codes, no colour
    assert out.getvalue() == "[bold]x[/bold] :smile: 42\n"


@pytest.mark.parametrize("columns, width", [(120, 100), (60, 60)])
def test_a_terminal_gets_colour_and_its_own_width_up_to_100(terminal, columns, width):
    terminal(columns)
    out = Tty()
    con = render.console(out)
    assert render.wants_colour(out) and con.is_terminal
    assert con.width == render.columns(out) == render.columns() == width
    con.print("[bold]x[/bold] :smile:")
    assert ANSI.sub("", out.getvalue()) == "[bold]x[/bold] :smile:\n"  # still literal
    out.seek(0), out.truncate()
    con.print("3 of 42 rows, 0.5")  # no colour of rich's own for numbers
    con.print(Text("red", style="red"))  # but the colours asked for
    assert out.getvalue() == "3 of 42 rows, 0.5\n" + ansi_of("red", "red") + "\n"


def test_no_color_makes_a_terminal_plain(terminal, monkeypatch):
    terminal(120)
    monkeypatch.setenv("NO_COLOR", "1")
    out = Tty()
    con = render.console(out)
    assert not render.wants_colour(out) and not con.is_terminal
    assert con.width == render.columns(out) == 80


CODE = (
    "x = 1\n\nif x:\n"
    "    y = [i for i in range(10) if i % 2 == 0 and i > 3 and i < 9 and i != 5]  # even\n"
)


def test_code_is_behind_the_gutter_fitted_never_wrapped_and_the_same_python():
    out, con = plain(40)
    render.code(con, CODE)
    lines = out.getvalue().splitlines()
    assert all(line.startswith(render.GUTTER.rstrip()) for line in lines), lines
    assert max(display_width(line) for line in lines) <= 40
    assert lines[1].strip() == "│"  # the blank line kept, behind its gutter
    shown = "\n".join([*render.code_lines(out.getvalue()), ""])
    assert shown.count("\n") == len(lines) and "    y = [" in shown  # no line lost, none added
    assert ast.dump(ast.parse(shown)) == ast.dump(ast.parse(CODE))


def test_on_a_terminal_the_gutter_is_dim_and_the_code_highlighted():
    out, con = styled(80)
    render.code(con, "if x:\n    pass\n")
    text = out.getvalue()
    assert text.count(ansi_of(render.GUTTER, "dim")) == 2
    assert ANSI.sub("", text) == f"{render.GUTTER}if x:\n{render.GUTTER}    pass\n"
    assert ANSI.search(text.replace(ansi_of(render.GUTTER, "dim"), ""))  # 'if' has a colour


def test_code_block_plain_fits_80_columns_coloured_100():
    line = "result = some_function(argument_one, argument_two, argument_three, four)  # 90 cols"
    assert len(line) > 80
    flat = render.code_block(line, colour=False)
    assert not ANSI.search(flat) and not flat.endswith("\n")
    assert max(display_width(x) for x in flat.splitlines()) <= 80 and len(flat.splitlines()) > 1
    coloured = render.code_block(line, colour=True)
    assert ANSI.search(coloured) and ANSI.sub("", coloured) == render.GUTTER + line
    assert ast.dump(ast.parse("\n".join(render.code_lines(flat)))) == ast.dump(ast.parse(line))


def test_a_panel_is_a_heavy_box_as_wide_as_its_text_with_the_title_on_the_left():
    out, con = plain(80)
    render.panel(con, "Lesson 1: x", title="T")
    top, middle, bottom = out.getvalue().splitlines()
    assert middle == "┃ Lesson 1: x ┃"  # not stretched to the console's width
    assert top.startswith("┏━ T ━") and top.endswith("┓") and len(top) == len(middle)
    assert bottom == "┗" + "━" * (len(middle) - 2) + "┛"
    out, con = plain(80)
    render.panel(con, "Lesson 1: x")
    assert out.getvalue().splitlines()[0] == "┏" + "━" * (len(middle) - 2) + "┓"


def test_a_heading_is_a_blank_line_then_bold_and_never_wrapped():
    out, con = plain(20)
    render.heading(con, "a long heading that is wider than twenty")
    assert out.getvalue() == "\n== a long heading that is wider than twenty\n"
    out, con = styled(80)
    render.heading(con, "1. Setup")
    assert ansi_of("== 1. Setup", "bold") in out.getvalue()


def test_piped_prose_keeps_one_blank_line_between_paragraphs_and_no_padding():
    out, con = plain(80)
    render.prose(con, "para one\n\n\n\npara two")
    assert out.getvalue() == "para one\n\npara two\n"
    out, con = plain(50)
    render.prose(con, "| a | b |\n|---|---|\n| x | y |")
    lines = out.getvalue().splitlines()
    assert lines and all(line == line.rstrip() for line in lines), lines
    shown = [line.split() for line in lines if line]
    assert shown[0] == ["a", "b"] and shown[-1] == ["x", "y"]


def test_cjk_prose_fills_the_width_less_the_margin():
    out, con = plain(80)
    render.prose(con, "字" * 100)
    widths = [display_width(line) for line in out.getvalue().splitlines()]
    assert widths == [78, 78, 44]  # 80 columns less 2, two columns a character


def test_a_numbered_list_keeps_its_periods_aligned_and_indents_what_wraps():
    out, con = plain(40)
    render.prose(con, "1. short\n2. a long item that wraps over more than one line of the terminal")
    lines = out.getvalue().splitlines()
    assert lines[0] == "1. short" and lines[1].startswith("2. a long item")
    assert len(lines) >= 3 and all(x.startswith("   ") and x[3] != " " for x in lines[2:])
    assert max(map(len, lines)) <= 40
    words = " ".join(x[3:] for x in lines[1:]).split()
    assert words == "a long item that wraps over more than one line of the terminal".split()
    out, con = plain(40)
    render.prose(con, "\n".join(f"{i}. item {i}" for i in range(1, 11)))
    lines = [x for x in out.getvalue().splitlines() if x]
    assert lines == [f"{i:>2}. item {i}" for i in range(1, 11)]  # right-aligned numerals
    out, con = styled(40)
    render.prose(con, "1. one\n2. two")
    assert ansi_of("1. ", "markdown.item.number") in out.getvalue()


def test_a_table_fits_wraps_its_cells_and_shows_its_header_in_the_header_style():
    text = (
        "| name | what it holds | more |\n|---|---|---|\n"
        "| q | the queries of every position in the sequence | x |\n"
        "| k | keys | a longer third column cell here |"
    )
    out, con = plain(50)
    render.prose(con, text)
    lines = out.getvalue().splitlines()
    assert max(map(display_width, lines)) <= 50 and lines[0].split() == [
        "name",
        "what",
        "it",
        "holds",
        "more",
    ]
    assert set(lines[1].strip()) == {"─"}  # the rule under the header
    body = " ".join(lines[2:]).split()
    for cell in ("the queries of every position in the sequence", "a longer third column cell"):
        assert all(word in body for word in cell.split())
    q_line = next(x for x in lines if x.split()[:1] == ["q"])
    assert q_line.rstrip().endswith("x")  # each cell in its own column, on its row's line
    out, con = styled(50)
    render.prose(con, text)
    assert ansi_of("name", "markdown.table.header") in out.getvalue()


def test_column_widths_keep_what_fits_and_share_the_rest_fairly():
    cells = [["name", "what it holds"], ["q", "the queries"]]
    assert render.column_widths(cells, 80) == [4, 13]  # fits: each column its longest cell
    long = "a long description with many words in it that must wrap somewhere"
    cells = [["id", "text", "note"], ["2", long, "a short note here"]]
    widths = render.column_widths(cells, 40)
    assert widths[0] == 2  # a narrow column stays whole
    assert sum(widths) == 40  # the room, all of it
    longest = [max(len(w) for c in col for w in c.split()) for col in zip(*cells, strict=True)]
    assert all(w >= least for w, least in zip(widths, longest, strict=True))
    assert widths[1] > widths[2]  # the column that holds more gets more
    tight = render.column_widths(cells, 12)  # less room than the longest words need
    assert tight == [2, max(longest[1], 10), max(longest[2], 10)]
    assert render.column_widths([], 10) == []


def test_join_cjk_leaves_fenced_code_as_written():
    text = "字\n字\n```\n字\n字\n```\n字\n字"
    assert render.join_cjk(text) == "字字\n```\n字\n字\n```\n字字"


def test_join_lines_keeps_a_lines_indentation_and_joins_cjk_across_a_trailing_space():
    assert render.join_lines("- item\n  continues\n  more") == "- item continues more"
    assert render.join_lines("  a\nb") == "  a b"
    assert render.join_lines("字 \n字") == "字字"
