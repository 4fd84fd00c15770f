"""What a learner sees in an 80-column terminal, in English, Japanese and Chinese.

Read from the rendered text (a piped console is 80 columns): no line wider than 80 display
cells (CJK characters count two), no table cell cut with "…" (every character of every cell
is still on the screen), and no line that ends inside a word (every Latin word on the screen
is a word of the source text, so a fragment such as "twic" fails). Code lines (behind the
gutter) and what the lesson code prints are the lesson's own and are left out.
"""

import io
import re
from collections import Counter
from contextlib import redirect_stdout

import numpy as np
import pytest

from attnlab import ref
from attnlab.i18n import LANGS
from attnlab.lessons import answers, engine, render, runner, show, source
from attnlab.tables import display_width, text_heatmap

WIDTH = 80
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _prose(text: str) -> str:
    out = io.StringIO()
    render.prose(render.console(out), text)
    return out.getvalue()


def _fits(shown: str, source_text: str, where: str) -> None:
    lines = shown.splitlines()
    wide = [ln for ln in lines if display_width(ln) > WIDTH]
    assert wide == [], where
    if "…" not in source_text:
        assert "…" not in shown, where
    known = set(WORD.findall(source_text))
    broken = {w for w in WORD.findall(shown) if w not in known}
    assert broken == set(), (where, broken)


def _texts(number: int, lang: str) -> dict[str, str]:
    words = source.prose(number, lang)
    return {"intro": words.intro, **words.texts}


@pytest.mark.parametrize("lang", LANGS)
def test_every_lesson_text_fits_80_columns_and_breaks_between_words(lang):
    for number in source.lessons():
        if lang not in source.languages(number):
            continue
        for key, text in _texts(number, lang).items():
            _fits(_prose(text), text, f"lesson {number} {lang} {key}")


def _table_cells(text: str) -> list[str]:
    rows = [ln for ln in text.splitlines() if ln.lstrip().startswith("|")]
    cells = [c.strip() for r in rows for c in r.strip().strip("|").split("|")]
    return [c for c in cells if c and not set(c) <= set("-: ")]


@pytest.mark.parametrize("lang", LANGS)
def test_no_table_cell_is_cut(lang):
    seen = 0
    for number in source.lessons():
        if lang not in source.languages(number):
            continue
        for key, text in _texts(number, lang).items():
            cells = _table_cells(text)
            if not cells:
                continue
            seen += 1
            shown = Counter(ch for ch in _prose(text) if not ch.isspace())
            wanted = Counter(ch for c in cells for ch in c.replace("`", "") if not ch.isspace())
            missing = wanted - shown
            assert not missing, (number, lang, key, "".join(missing.elements()))
    assert seen >= 3  # the lessons' recap and comparison tables were read


def test_a_cjk_table_wraps_its_cells_inside_80_columns():
    text = (
        "| モデル | 過去を運ぶもの | T 方向の並列計算 | 限界 |\n|---|---|---|---|\n"
        "| RNN | 一つの隠れベクトルをトークンごとに書き換える | できない | 勾配が消える・発散する |\n"
        "| マスク | np.tril、それからソフトマックスの前に `np.where(mask, scores, -inf)` | 一部 "
        "| ヘッドごとに T × T 個のスコア |\n"
    )
    shown = _prose(text)
    _fits(shown, text, "table")
    kept = Counter(ch for ch in shown if not ch.isspace())
    cells = Counter(ch for c in _table_cells(text) for ch in c.replace("`", "") if ch != " ")
    assert not cells - kept  # nothing cut
    assert "np.where(mask," in shown  # the identifier is whole on one line
    assert not shown.startswith("\n")  # no blank lines before the table
    body = [ln for ln in shown.splitlines() if ln.strip()]
    assert any(ln.lstrip().startswith("RNN") for ln in body)
    rnn = next(i for i, ln in enumerate(body) if ln.lstrip().startswith("RNN"))
    assert len(body) > rnn + 1 and not body[rnn + 1].lstrip().startswith("マスク")  # it wrapped


def test_a_line_after_a_long_vowel_keeps_its_space_before_latin_text():
    joined = render.join_lines(
        "クエリ Q = X W_Q、キー\nK = X W_K、バリュー\nV = X W_V。\n次の文\nです。"
    )
    assert "キー K = X W_K" in joined and "バリュー V = X W_V" in joined
    assert joined.endswith("次の文です。")


def test_a_list_items_next_line_and_a_line_opening_with_a_quote_join_without_a_space():
    joined = render.join_lines(
        "- dot：内積は次元とともに\n  大きくなります。\n- b\n所以\n“狗咬人”和\n“人咬狗”"
    )
    assert joined.splitlines() == [
        "- dot：内積は次元とともに大きくなります。",
        "- b 所以“狗咬人”和“人咬狗”",
    ]
    assert (
        render.join_lines("- a list item\n  goes on\nsaid “so”\nand")
        == "- a list item goes on said “so” and"
    )
    page = render.join_cjk(
        "- dot：内積は次元とともに\n  大きくなります。\n\n所以\n“狗咬人”和\n“人咬狗”"
    )
    assert page == "- dot：内積は次元とともに大きくなります。\n\n所以“狗咬人”和“人咬狗”"


_STRAY = re.compile(r"(?<=[\u3040-\u30ff\u4e00-\u9fff“”]) (?=[\u3040-\u30ff\u4e00-\u9fff“”])")


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_no_space_between_two_cjk_characters_the_source_does_not_have(lang):
    """A space the learner sees between two CJK characters (or a curly quote and one) is in
    the source line itself, never one that a line join put in."""
    for number in source.lessons():
        for key, text in _texts(number, lang).items():
            for line in _prose(text).splitlines():
                for m in _STRAY.finditer(line):
                    around = line[m.start() - 1 : m.end() + 1]
                    assert around in text, f"lesson {number} {lang} {key}: …{line.strip()}…"


def test_wrapped_chinese_never_opens_a_line_with_a_closing_quote_nor_ends_one_on_an_opening():
    text = "把“je suis un chat”译成“I am a cat”，再看“un”的权重。" * 4
    for width in range(16, 80):
        rows = render.wrap_wide(text, width).split("\\\n")
        assert "".join("".join(rows).split()) == "".join(text.split()), (width, rows)
        assert not any(r[0] in "”’" for r in rows[1:]), (width, rows)
        assert not any(r.endswith(("“", "‘")) for r in rows), (width, rows)


def test_wrapped_cjk_never_splits_a_formula_a_shape_or_small_kana():
    text = "形は (B, H, T, S) です。" * 4 + "ヘッドごとに T × T 個のスコア、キー K = X W_K。" * 4
    for width in range(24, 80):
        rows = render.wrap_wide(text, width).split("\\\n")
        assert all(display_width(r) <= width for r in rows), (width, rows)
        assert all("(B, H, T, S)" in r or "(B," not in r for r in rows), (width, rows)
        assert all(not r.endswith(("×", "=")) for r in rows), (width, rows)
        assert not any(r[0] in render.SMALL_KANA for r in rows[1:]), (width, rows)
    formula = "公式就是论文中的 softmax(Q Kᵀ / √d) V。" * 4  # Kᵀ: one symbol, never split
    for width in range(24, 80):
        rows = render.wrap_wide(formula, width).split("\\\n")
        assert not any(r.startswith("ᵀ") for r in rows), (width, rows)


@pytest.mark.parametrize("lang", LANGS)
def test_the_figure_hint_and_the_quiz_fit_and_break_between_words(lang, monkeypatch):
    LANG = lang  # noqa: F841 (plot reads the caller's LANG)
    hint = io.StringIO()
    with show.plotting(), redirect_stdout(hint):
        show.plot("lesson3_x", show.heat(np.eye(2)))
        show.plot("lesson3_y", show.heat(np.eye(2)))  # the hint is said once per lesson
    text = show.HINT(lang).format(n=3).replace("\u00a0", " ") + show.heat(np.eye(2)).text()
    _fits(hint.getvalue(), text, "hint")
    assert (
        hint.getvalue().count("--plots DIR") == 1
        and "attnlab lesson 3 --plots DIR" in hint.getvalue()
    )
    for number in source.lessons():
        if lang not in source.languages(number):
            continue
        answers = "a\n" * len(source.prose(number, lang).quiz)
        out, whole = io.StringIO(), io.StringIO()
        engine.run_quiz(number, lang, out, io.StringIO(answers))
        monkeypatch.setattr(render, "columns", lambda out=None: 10**6)  # nothing wrapped
        engine.run_quiz(number, lang, whole, io.StringIO(answers))
        monkeypatch.undo()
        _fits(out.getvalue(), whole.getvalue(), f"quiz {number} {lang}")
        assert "".join(out.getvalue().split()) == "".join(whole.getvalue().split())


@pytest.mark.parametrize("lang", LANGS)
def test_lesson2s_comparison_table_as_the_learner_runs_it(lang):
    out = io.StringIO()
    section = [s.id for s in runner.steps(2)].index("comparison") + 1
    engine.run(2, lang, section=section, out=out)
    shown = out.getvalue()
    prose = [ln for ln in shown.splitlines() if not ln.startswith(render.GUTTER)]
    assert all(display_width(ln) <= WIDTH for ln in prose)
    assert "…" not in shown
    cells = _table_cells(next(t for t in _texts(2, lang).values() if "Transformer |" in t))
    kept = Counter(ch for ch in shown if not ch.isspace())
    assert not Counter(ch for c in cells for ch in c.replace("`", "") if ch != " ") - kept


def test_the_positional_encoding_heatmap_shows_every_column():
    pe = ref.sinusoidal_positional_encoding(50, 64)  # sin on even columns, cos on odd ones
    lines = text_heatmap(pe, None, None, -1, 1, 72).splitlines()
    first = lines[1].split(" ", 1)[1].strip()
    # position 0: sin 0 = 0 (the step from 0 to 0.5: ▓), cos 0 = 1 (the top: █), 64 columns
    assert first == "▓█" * 32
    assert all(display_width(ln) <= 72 for ln in lines)


def test_heatmap_labels_longer_than_one_character_stay_apart():
    w = np.full((2, 4), 0.25)
    head = text_heatmap(w, ["dot", "general"], ["je", "suis", "un", "chat"], 0, 1).splitlines()[0]
    assert head.split() == ["je", "suis", "un", "chat"]
    head = text_heatmap(np.eye(3), ["w1", "w2", "w3"], ["w1", "w2", "w3"], 0, 1).splitlines()[0]
    assert head.split() == ["w1", "w2", "w3"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_closing_lines_of_a_lesson_fit(lang):
    for number in source.lessons():
        if lang not in source.languages(number):
            continue
        out, wide = io.StringIO(), io.StringIO()
        engine._point_onwards(number, lang, render.console(out))  # exercises and quiz: where next
        con = render.console(wide)
        con.width = 10**4
        engine._point_onwards(number, lang, con)
        _fits(out.getvalue(), wide.getvalue(), f"lesson {number} {lang} closing lines")
        assert "".join(out.getvalue().split()) == "".join(wide.getvalue().split())


def test_a_heatmaps_axes_are_punctuated_in_the_lessons_language():
    LANG = "ja"  # heat reads the caller's LANG for its default axes
    assert show.heat(np.eye(2)).text().endswith("   （クエリ ↓、キー →）")
    LANG = "en"  # noqa: F841
    assert show.heat(np.eye(2)).text().endswith("   (query ↓, key →)")


def test_a_cjk_paragraph_that_opens_with_a_code_span_is_wrapped_too():
    text = "`@` は最後の二つの軸に作用するので、スコアの形は (B, H, T, S) になります。" * 4
    for width in range(30, 80):
        rows = render.wrap_wide(text, width).split("\\\n")
        assert len(rows) > 1, width
        assert all(display_width(r) <= width for r in rows), (width, rows)
        assert "".join(rows).replace(" ", "") == text.replace(" ", ""), width


def test_wrapped_cjk_keeps_a_formula_with_a_dot_a_slash_or_a_minus_whole():
    text = "周波数は exp(2i · (−ln 10000) / d) と書けます。残りを 1 / 0.9 倍します。" * 3
    for width in range(40, 80):
        rows = render.wrap_wide(text, width).split("\\\n")
        assert all(display_width(r) <= width for r in rows), (width, rows)
        joined = [r for r in rows if "exp(" in r or "ln 10000" in r]
        assert all("exp(2i · (−ln 10000) / d)" in r for r in joined), (width, rows)
        assert all("1 / 0.9" in r for r in rows if r.endswith(("1 /", "1")) or "0.9" in r), rows


@pytest.mark.parametrize("lang", LANGS)
def test_a_numbered_list_keeps_the_period_after_each_number(lang):
    items = {"en": "score each state", "ja": "各状態にスコアを付ける", "zh": "给每个状态打分"}[lang]
    shown = _prose("".join(f"{i}. {items} {i}\n" for i in range(1, 4)) + "\n- a bullet\n")
    numbered = [ln.strip() for ln in shown.splitlines() if ln.strip()[:1].isdigit()]
    assert numbered == [f"{i}. {items} {i}" for i in range(1, 4)], shown
    assert any(ln.strip().startswith("•") for ln in shown.splitlines()), shown


def test_wrapped_cjk_keeps_a_short_formula_in_parentheses_whole():
    text = "それまでの二つの和に exp(古い最大値 − 新しい最大値) を掛けて縮めます。" * 3
    held = "(古い最大値 − 新しい最大値)"
    for width in range(40, 80):
        rows = render.wrap_wide(text, width).split("\\\n")
        assert all(display_width(r) <= width for r in rows), (width, rows)
        assert "".join(rows).replace(" ", "") == text.replace(" ", ""), width
        assert all(held in r for r in rows if "最大" in r), (width, rows)


def test_a_header_cell_with_a_line_break_takes_two_lines_and_the_table_stays_aligned():
    from attnlab.tables import text_table

    shown = text_table(["d", "最大の重み\nそのまま", "x"], [[1, "0.5", "y"], [22, "0.25", "zz"]])
    lines = shown.splitlines()
    assert lines[0].split() == ["d", "最大の重み", "x"] and lines[1].split() == ["そのまま"]
    assert set(lines[2].replace(" ", "")) == {"-"}  # the rule under the whole header
    col = display_width(lines[0][: lines[0].index("最")])  # where the second column starts
    assert display_width(lines[1][: lines[1].index("そ")]) == col
    assert display_width(lines[3][: lines[3].index("0.5")]) == col
    assert text_table(["a", "b"], [[1, 2]]).splitlines()[1] == "-  -"  # one-line headers as before


@pytest.mark.parametrize("lang", LANGS)
def test_the_quiz_shows_code_without_backticks_and_a_full_width_colon_without_a_space(lang):
    out = io.StringIO()
    quiz = source.prose(2, lang).quiz
    engine.run_quiz(2, lang, out, io.StringIO("a\n" * len(quiz)))
    shown = out.getvalue()
    assert "`" in "".join(q.explanation + "".join(q.why) for q in quiz)  # the source has some
    assert "`" not in shown and "~mask" in shown
    if lang != "en":
        assert not re.search(r"[：:] [a-e]\)", shown)  # 「答案：b)」, not 「答案： b)」
        assert re.search(r"：[a-e]\)", shown)
    else:
        assert re.search(r"The answer: [a-e]\)", shown)
    printed = io.StringIO()
    with redirect_stdout(printed):
        answers.quiz(2, len(quiz), "a", lang)  # the exported lesson's cell prints it too
    assert "`" not in printed.getvalue()


def _squashed(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("lang", LANGS)
def test_an_unanswered_question_in_the_exported_script_fits_80_columns(lang, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.setattr(answers, "_in_kernel", lambda: False)  # a script, run in a terminal
    how = answers.WORDS["unanswered_script"](lang).format(command="attnlab lesson 1 --quiz")
    for k, q in enumerate(source.prose(1, lang).quiz, 1):
        printed = io.StringIO()
        with redirect_stdout(printed):
            answers.quiz(1, k, "", lang)
        label = answers.WORDS["question"](lang).format(k=k)
        said = render.plain("\n".join([label + q.question, *q.choices, how]))
        _fits(printed.getvalue(), said, f"{lang} question {k}")
        assert _squashed(printed.getvalue()) == _squashed(said)  # every character, in order
        assert "attnlab lesson 1 --quiz" in printed.getvalue()  # the command on one line


@pytest.mark.parametrize("lang", LANGS)
def test_the_lesson_list_fits_80_columns_with_every_word_and_summaries_indented(lang, capsys):
    from attnlab.cli import main

    assert main(["lesson", "list", "--lang", lang]) == 0  # piped (captured): 80 columns
    shown = capsys.readouterr().out
    lines = shown.splitlines()
    assert [ln for ln in lines if display_width(ln) > WIDTH] == []
    # every title and summary is still there, whole (only whitespace between them changed)
    for number in source.lessons():
        words = source.prose(number, lang)
        for text in (words.title, words.summary):
            assert _squashed(text) in _squashed(shown), (number, text)
    # the same words in the same order as the list on unlimited width: none split or lost
    unlimited = engine.list_lessons(lang, width=10_000)
    assert max(map(display_width, unlimited.splitlines())) > WIDTH  # (so wrapping was needed)
    assert WORD.findall(shown) == WORD.findall(unlimited)
    assert _squashed(shown) == _squashed(unlimited)
    # a lesson's lines: its number and title, then the summary (and its wrap) indented
    listed = lines[: lines.index("")]
    assert all(re.match(r"\d  \S|   \S", ln) for ln in listed), listed
    assert len(listed) > 2 * len(source.lessons())
    # the command to copy stays whole on its line (ja broke it at '[--format' / 'py|ipynb|both]')
    assert "   attnlab lesson N --export DIR [--format py|ipynb|both]" in lines


def _hint_lines(report: answers.AnswerReport) -> list[str]:
    return str(report).splitlines()[2:]  # after the verdict and the message


@pytest.mark.parametrize("lang", LANGS)
def test_a_mistakes_hint_is_one_paragraph_fitted_to_the_terminal(lang, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    seen = 0
    for number in source.lessons():
        for key, text in source.prose(number, lang).texts.items():
            if "/mistake/" not in key:
                continue
            exercise, _, mistake = key.split("/")
            hint = answers.hint(number, exercise, mistake, lang)
            report = answers.AnswerReport(exercise, False, "x", [mistake], {mistake: hint}, lang)
            shown = _hint_lines(report)
            where = (number, lang, key, shown)
            assert all(display_width(ln) <= WIDTH for ln in shown), where
            # a line ends early only where the hint ends: the source's own line breaks are gone
            assert all(display_width(ln) > WIDTH - 12 for ln in shown[:-1]), where
            assert _squashed("".join(shown)).replace(f"{mistake}:", "", 1) == _squashed(
                render.plain(text)
            ), where
            assert WORD.findall(" ".join(shown)) == WORD.findall(
                f"{mistake} " * (lang == "en") + render.plain(text)
            ), where
            seen += "\n" in text
    assert seen >= 1  # a hint written over two source lines was read


def test_check_answer_prints_lesson5s_plain_average_hint_as_one_sentence(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    _, _, wrong = answers._known(5, "three", 0)
    report = answers.check_answer(5, "three", wrong["average"], lang="ja")
    assert report.mistakes == ["average"]
    shown = _hint_lines(report)
    assert "必要があります。" in "".join(ln.strip() for ln in shown)
    assert display_width(shown[0]) > WIDTH - 4  # the first line is full
    assert len(shown) == 2 and all(display_width(ln) <= WIDTH for ln in shown)
