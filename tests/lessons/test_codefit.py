"""Code wider than the terminal, shown as the same Python re-flowed to fit (``codefit``).

The oracle is Python's own parser: the re-flowed code has the same syntax tree as the code
(docstrings: the same text up to whitespace) and the same comment words, and every line fits.
"""

import ast
import io
import re
import tokenize

import pytest

from attnlab.lessons import codefit, notebooks, render, source
from attnlab.lessons.notebooks import build
from attnlab.tables import display_width

W = 78  # 80 columns less the gutter


def fit(code: str, width: int = W) -> str:
    return codefit.fit_code(code, width, render.fit)


def tree(code: str) -> str:
    """The syntax tree, with the whitespace of every string removed (a docstring may gain
    line breaks)."""
    parsed = ast.parse(code)
    for node in ast.walk(parsed):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = re.sub(r"\s+", "", node.value)
    return ast.dump(parsed)


def comment_words(code: str) -> list[str]:
    toks = tokenize.generate_tokens(io.StringIO(code).readline)
    text = "".join(t.string[1:] for t in toks if t.type == tokenize.COMMENT)
    return re.sub(r"\s+", "", text)


def same_program_that_fits(code: str, shown: str, width: int = W) -> None:
    assert tree(shown) == tree(code)
    assert comment_words(shown) == comment_words(code)
    assert max(display_width(ln) for ln in shown.splitlines()) <= width, shown


def test_code_that_fits_is_untouched_and_a_fragment_is_shown_as_is():
    code = "def f(x):\n    return x + 1  # one more\n"
    assert fit(code) == code
    fragment = "y = g(" + "a, " * 40  # not whole Python: nothing to re-flow safely
    assert fit(fragment) == fragment


def test_a_trailing_comment_moves_above_its_line_at_its_indentation():
    code = "for d in (16, 64):\n    s = q @ k.T / np.sqrt(d)  # " + "scaled scores, " * 6 + "ok\n"
    shown = fit(code)
    lines = shown.splitlines()
    assert lines[0] == "for d in (16, 64):"
    assert (
        lines[1].startswith("    # scaled scores,") and lines[-1] == "    s = q @ k.T / np.sqrt(d)"
    )
    assert all(ln.startswith("    # ") for ln in lines[1:-1])  # long: wrapped between words
    same_program_that_fits(code, shown)


def test_a_long_expression_breaks_between_tokens_inside_brackets_or_after_a_backslash():
    inside = "total = sum([alpha_value, beta_value, gamma_value, delta_value, epsilon_value, z])"
    shown = fit(inside)
    assert "\\" not in shown and shown.splitlines()[1].startswith("    ")
    same_program_that_fits(inside, shown)
    outside = "flag = first_long_condition_name and second_long_condition_name or third_name_x"
    shown = fit(outside)
    assert shown.splitlines()[0].endswith(" \\")
    same_program_that_fits(outside, shown)
    names = set(re.findall(r"\w+", outside))  # never inside a name
    assert set(re.findall(r"\w+", shown)) == names


def test_a_long_string_in_brackets_splits_after_a_space_or_between_cjk_never_in_braces():
    code = 'print(f"gradient at the input of 12 blocks: residuals {a:.2e}, plain {b:.2e} {{x}}")'
    shown = fit(code)
    assert len(shown.splitlines()) == 2
    same_program_that_fits(code, shown)
    cjk = 'print(f"  年を書くあいだ入力の年に置いた重み：{[round(v, 2) for v in on_year[kind].values()]}")'
    shown = fit(cjk)
    assert shown.splitlines()[0].endswith('重み："')  # after the colon, not inside a word
    same_program_that_fits(cjk, shown)
    for row in shown.splitlines():
        assert row.count("{") == row.count("}")  # a replacement field stays whole


def test_a_one_line_docstring_wraps_between_words_and_a_triple_quoted_value_stays():
    code = (
        'def f():\n    """' + "Explains the shapes of every argument, " * 3 + '"""\n    return 1\n'
    )
    shown = fit(code)
    assert shown.splitlines()[1].startswith('    """Explains') and shown.count('"""') == 2
    same_program_that_fits(code, shown)
    value = 'x = """' + "a long text value " * 6 + '"""\n'
    shown = fit(value)  # a string that is data, not a docstring: its text never changes
    assert ast.dump(ast.parse(shown)) == ast.dump(ast.parse(value)) and shown != value


def test_on_a_wider_console_only_lines_wider_than_it_change():
    code = "y = 1  # " + "word " * 17
    assert fit(code, 100) == code
    assert fit(code, 60) != code


@pytest.mark.parametrize("number", source.lessons())
def test_every_lessons_code_shown_at_80_columns_is_the_same_program(number):
    lang = ("en", "ja", "zh")[number % 3]  # the code is the same; comments and strings differ
    cells = build(number, lang, run=False)
    script = notebooks.to_py([c for c in cells if c.kind != notebooks.NUMBERS])
    same_program_that_fits(script, fit(script))


def test_a_comprehension_breaks_before_its_for_never_inside_the_for_target():
    # lesson 4 showed 'for f,' / 'b_ in zip(...)': the comma of a for target is no place to break
    code = "states = torch.stack([torch.cat([f, b_]) for f, b_ in zip(fwd, bwd, strict=True)])"
    shown = fit(code)
    same_program_that_fits(code, shown)
    assert shown.splitlines()[1].strip().startswith("for f, b_ in zip("), shown
    plain = "x = f(aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, cccccccccccccccc, dd)"
    assert fit(plain).splitlines()[0].endswith("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb,")  # commas still


@pytest.mark.parametrize("width", [44, 68])
def test_every_lessons_code_on_a_narrower_terminal_is_the_same_program(width):
    """Each step's code of every lesson, re-flowed for terminals of 46 and 70 columns (less
    the gutter): the same syntax tree and comments at each, and from 70 columns on every line
    fits (narrower, a line with no space to break at, such as 'f(*map(torch.from_numpy,', stays
    wider)."""
    from attnlab.lessons import runner

    for number in source.lessons():
        for step in runner.steps(number):
            shown = fit(step.code, width)
            assert tree(shown) == tree(step.code), (number, step.id, width)
            assert comment_words(shown) == comment_words(step.code), (number, step.id)
            if width >= 68:
                wide = [ln for ln in shown.splitlines() if display_width(ln) > width]
                assert wide == [], (number, step.id, wide)


def test_a_line_exactly_as_wide_as_the_room_stays_and_one_column_more_breaks():
    assert fit("abcdefghij = 1", 14) == "abcdefghij = 1"
    assert fit("abcdefghij = 12", 14) == "abcdefghij = \\\n    12"


def test_a_row_ends_outside_the_most_brackets_it_can_and_fills_its_line():
    code = "total = compute(alpha, beta(gamma, delta)) / normaliser + offset_value"
    rows = fit(code, 40).splitlines()
    assert rows[0] == "total = compute(alpha,"  # not inside beta(...), one bracket deeper
    rows = fit(code, 50).splitlines()
    assert rows == [
        "total = compute(alpha, beta(gamma, delta)) / \\",
        "    normaliser + offset_value",
    ]
    rows = fit(code, 60).splitlines()
    assert rows[0].endswith("normaliser + \\") and len(rows) == 2  # as far as fits
    for width in (40, 50, 60):
        same_program_that_fits(code, fit(code, width), width)


def test_an_f_string_piece_reopens_with_its_prefix_and_keeps_its_braces_whole():
    code = 'print(f"{{literal}} {value} and some more words that go on " + "plain words here too")'
    shown = fit(code, 40)
    rows = shown.splitlines()
    assert rows[0].endswith('"') and rows[1].lstrip().startswith('f"')
    assert "{{literal}}" in rows[0] and "{value}" in rows[0]
    same_program_that_fits(code, shown, 40)


def test_a_docstrings_closing_quotes_never_stand_alone():
    code = 'def f():\n    """One two three four five six seven eight nine ten eleven twelve."""\n'
    rows = fit(code, 30).splitlines()
    assert rows[-1] == '    eleven twelve."""' and all(len(r) <= 30 for r in rows)


def test_a_cjk_string_breaks_after_its_punctuation_and_reopens_its_quote():
    code = 'print("每个查询与所有键比较，得到权重。权重之和为一，输出是值的平均。")'
    shown = fit(code, 30)
    rows = shown.splitlines()
    assert len(rows) > 2 and all(r.rstrip()[-2] in "，。" for r in rows[:-1]), rows
    assert all(r.startswith('    "') for r in rows[1:])
    same_program_that_fits(code, shown, 30)
