"""``tables.text_table`` with a width: the wrapped column, headings, and what is never lost."""

import random

import pytest

from attnlab.tables import MIN_WRAP, display_width, fit, text_table

WORDS = ["mask", "causal", "T != S", "注意", "のクエリ", "(B, 1, T, S)", "x", "float16:"]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _columns(line: str, starts: list[int]) -> list[str]:
    """``line`` cut at the display columns ``starts`` (where each column begins)."""
    cells, col, cell = [], 0, ""
    bounds = [*starts[1:], 10**6]
    for ch in line:
        if col >= bounds[len(cells)]:
            cells.append(cell)
            cell = ""
        cell += ch
        col += display_width(ch)
    cells.append(cell)
    return [c.strip() for c in cells] + [""] * (len(starts) - len(cells))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("wrap", [0, -1])
def test_a_wrapped_column_fits_the_width_and_keeps_every_character_in_its_row(seed, wrap):
    rng = random.Random(seed)
    rows = []
    for _ in range(5):  # the wrapped column long, the other one short
        long, short = _words(rng, rng.randint(6, 12)), _words(rng, 2)
        rows.append([long, "pass", short] if wrap == 0 else [short, "pass", long])
    rows.insert(2, "a heading row")
    other = max(display_width(r[2 if wrap == 0 else 0]) for r in rows if not isinstance(r, str))
    for room in (MIN_WRAP, 20, 30):  # the wrapped column's width
        width = max(other, 4) + 2 + len("status") + 2 + room
        shown = text_table(["what", "status", "note"], rows, width=width, wrap=wrap).splitlines()
        assert max(display_width(line) for line in shown) <= width, shown
        rule = shown[1].split("  ")
        starts = [sum(len(r) + 2 for r in rule[:i]) for i in range(len(rule))]
        got: list = []
        for line in shown[2:]:
            if line == "a heading row":  # flush left, on a line of its own
                got.append(line)
            elif _columns(line, starts)[1]:  # a row starts: its status column is filled
                got.append(_columns(line, starts))
            else:  # a continuation: only the wrapped column holds text
                more = _columns(line, starts)
                assert [c for i, c in enumerate(more) if i != wrap % 3] == ["", ""], line
                got[-1][wrap] += " " + more[wrap]
        squeeze = [r if isinstance(r, str) else [c.replace(" ", "") for c in r] for r in got]
        expect = [r if isinstance(r, str) else [c.replace(" ", "") for c in r] for r in rows]
        assert squeeze == expect, (width, shown)
        assert len(shown) > len(rows) + 2  # something was broken


def test_a_column_is_broken_under_itself():
    shown = text_table(["id", "what"], [["basic", "one two three four five six"]], width=20)
    lines = shown.splitlines()
    col = lines[0].index("what")
    assert lines[2].startswith("basic") and lines[2][col:].startswith("one")
    assert all(line[:col].strip() == "" and line[col] != " " for line in lines[3:])
    headed = text_table(["id"], ["softmax", ["basic"]], indent="  ").splitlines()
    assert headed == ["  id", "  -----", "softmax", "  basic"]  # a heading is not indented
    assert len(lines) > 3 and " ".join(l[col:] for l in lines[2:]) == "one two three four five six"  # noqa: E741


def test_a_table_that_fits_or_cannot_be_narrowed_enough_is_unchanged():
    rows = [["a" * 30, "b" * 30, "wide words here"]]
    plain = text_table(["x", "y", "z"], rows)
    assert text_table(["x", "y", "z"], rows, width=200) == plain
    tight = 30 + 2 + 30 + 2 + MIN_WRAP - 1  # the last column would get MIN_WRAP - 1
    assert text_table(["x", "y", "z"], rows, width=tight) == plain
    narrowed = text_table(["x", "y", "z"], rows, width=tight + 1)
    assert narrowed != plain and max(map(display_width, narrowed.splitlines())) <= tight + 1


@pytest.mark.parametrize("seed", range(20))
def test_cjk_text_breaks_with_no_bracket_left_open_or_closed_at_a_line_edge(seed):
    # an opening bracket ended a line in a Japanese starter: "…かけます。(" / "出力 (T, d_k), …"
    rng = random.Random(seed)
    pieces = [*"出力 重み ( （ ) ） 、 。 「 」".split(), "を返します", " (T, d_k)"]
    text = ""
    for _ in range(60):  # text where a space follows an opening bracket is not text
        text += rng.choice(pieces).lstrip() if text[-1:] in "(（「" else rng.choice(pieces)
    for width in (20, 31, 40):
        rows = fit(text, width).split("\n")
        assert all(display_width(r) <= width for r in rows), rows
        assert "".join("".join(rows).split()) == "".join(text.split())  # nothing lost
        assert not [r for r in rows[:-1] if r.rstrip()[-1] in "(（「"], rows
        assert not [r for r in rows[1:] if r.lstrip()[0] in ")）、。」"], rows
