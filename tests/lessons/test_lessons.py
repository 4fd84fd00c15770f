import ast
import copy
import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from attnlab import __version__ as attnlab_version
from attnlab import lessons
from attnlab.cli import main
from attnlab.grade import check
from attnlab.lessons import (
    answers,
    codefit,
    comments,
    engine,
    notebooks,
    render,
    runner,
    show,
    source,
)
from attnlab.lessons.notebooks import build
from attnlab.lessons.render import GUTTER, code_lines
from attnlab.tables import display_width
from helpers import lesson_run, lesson_steps, short, trains

KANA = re.compile(r"[\u3040-\u30ff]")  # hiragana/katakana: Japanese prose
HAN = re.compile(r"[\u4e00-\u9fff]")
LESSONS = source.lessons()
LANGS = ["en", "ja", "zh"]


def _run(number=1, **kw) -> tuple[str, dict]:
    buf = io.StringIO()
    results = lessons.run(number, out=buf, **{"overrides": short(number), **kw})
    return buf.getvalue(), results


def _copy(ns: dict) -> dict:
    """A deep copy of a lesson's namespace; modules (and what they hold) shared, and so is a
    value that cannot be copied (as ``Session.fork`` shares every value)."""
    memo = {id(m): m for m in list(sys.modules.values()) if m is not None}
    out = {}
    for k, v in ns.items():
        try:
            out[k] = v if id(v) in memo else copy.deepcopy(v, memo)
        except (TypeError, ValueError, RuntimeError, copy.Error):
            out[k] = v
    return out


@pytest.fixture(scope="session")
def prefixes():
    """The namespace after the setup and the first k steps, run quietly once per (lesson,
    language, seed, overrides) and copied for each use: what ``Session.steps`` would compute,
    without running a lesson's first steps again for every section and every exercise."""
    cache: dict[tuple, list[dict]] = {}

    def state(s: runner.Session, upto: int | None) -> dict:
        steps = runner.steps(s.number)
        n = len(steps) if upto is None else min(upto, len(steps))
        key = (s.number, s.lang, s.seed, tuple(sorted(s.overrides.items())))
        states = cache.setdefault(key, [])
        if not states:
            first = runner.Session(s.number, s.seed, s.lang, overrides=dict(s.overrides))
            first.run_cell(source.cells(s.number)[0], quiet=True)
            states.append(first.ns)
        while len(states) <= n:
            nxt = runner.Session(s.number, s.seed, s.lang, _copy(states[-1]), dict(s.overrides))
            nxt.run_cell(steps[len(states) - 1], quiet=True)
            states.append(nxt.ns)
        return _copy(states[n])

    return state


@pytest.fixture(autouse=True)
def cached_steps(monkeypatch, prefixes):
    def steps(self, upto=None):
        self.ns.clear()
        self.ns.update(prefixes(self, upto))

    monkeypatch.setattr(runner.Session, "steps", steps)


_BUILT: dict[tuple, list] = {}


def built(number: int, lang: str) -> list:
    """``notebooks.build``'s cells for (lesson, language), built once in this test session."""
    if (number, lang) not in _BUILT:
        _BUILT[(number, lang)] = build(number, lang, overrides=short(number))
    return _BUILT[(number, lang)]


full = lesson_run  # the whole terminal lesson, once per (lesson, language, seed) per process


def test_lesson1_section2_golden_numbers_from_the_course():
    text, res = _run(1, section=2)
    np.testing.assert_allclose(res[2]["scores"], [0.1, 0.0, 0.9, 1.0, 0.8])
    assert "{'床': 0.1, '前': 0.0, '明': 0.9, '月': 1.0, '光': 0.8}" in text
    assert "{'床': 0.12, '前': 0.11, '明': 0.26, '月': 0.29, '光': 0.23}" in text
    assert "{'床': 0.01, '前': 0.0, '明': 0.3, '月': 0.5, '光': 0.18}" in text
    assert "(0.29)" in text and "0.50" in text  # the prose's numbers come from the run


def test_lesson1_other_steps_compute_what_they_claim():
    _, res = full(1)
    at = {cell.id: res[k] for k, cell in enumerate(runner.steps(1), 1)}
    np.testing.assert_allclose(at["averaging"]["W"][3], [0.25] * 4 + [0])
    values = at["values"]  # 月's value + 1 moves 光's output by 月's weight, in every entry
    w, v = at["query_key"]["w"], values["v"]
    np.testing.assert_allclose(values["got"], sum(w[i] * v[i] for i in range(5)))
    np.testing.assert_allclose(values["moved"], np.full(v.shape[1], w[3]))
    a = at["causal_mask"]["a"]
    assert np.allclose(a.sum(1), 1) and np.all(np.triu(a, 1) == 0)
    sqrt_d = at["sqrt_d"]
    assert all(r > 0.75 for r in sqrt_d["raw_max"]) and all(s < 0.6 for s in sqrt_d["scaled_max"])
    assert 0 < at["full_head"]["diff"] < 1e-5  # float32 vs torch: rounding only
    assert at["full_head"]["out"].shape == (5, 8)


def test_lesson2_reproduces_the_course_tables():
    text, res = _run(2, section=5)
    np.testing.assert_allclose(
        res[5]["unmasked"],
        [[0.401, 0.198, 0.401], [0.164, 0.164, 0.673], [0.178, 0.088, 0.734]],
        atol=5e-4,
    )
    np.testing.assert_allclose(
        res[5]["weights"], [[1, 0, 0], [0.5, 0.5, 0], [0.178, 0.088, 0.734]], atol=5e-4
    )
    assert "0.401 · 0.198 · 0.401" in text and "0.500 · 0.500 · 0.000" in text
    _, res = _run(2, section=4)
    assert np.allclose(res[4]["right"].sum(1), 1) and not np.allclose(res[4]["wrong"].sum(1), 1)
    _, res = _run(2, section=6)
    assert res[6]["worst"] < 1e-12


def test_lessons_3_4_5_numbers():
    _, res = full(3)
    assert res[1]["d_k"] == 64 and res[1]["diff"] < 1e-10
    assert res[3]["plain"] < 1e-12 and res[3]["with_pe"] > 0.1
    assert res[5]["residual"] < 1e-10 and res[5]["exact"] < 1e-10
    assert np.ptp(res[5]["dots"]) < 1e-12 and res[6]["far"] < 1e-10
    assert np.ptp(res[5]["scores"]) > 0.1  # projected, the same offset scores differently
    assert res[5]["looks_at"] == [7, 47, 117]  # W_q W_kᵀ = R.T: three back, everywhere
    assert res[1]["block_diff"] < 1e-12
    _, res = full(4)
    at = {cell.id: k for k, cell in enumerate(runner.steps(4), 1)}
    assert res[at["lstm_step"]]["lstm_diff"] < 1e-12 and res[at["gru_step"]]["gru_diff"] < 1e-12
    assert res[at["bidirectional"]]["bi_diff"] < 1e-12
    reach = res[at["vanishing"]]["reach"]  # 40 steps back: plain RNN faded, open LSTM not
    assert reach["RNN"][-1] < 1e-6 < 1e-3 < res[at["vanishing"]]["gated_far"]
    clip = res[at["clipping"]]
    assert clip["norm"] > 1e3 and abs(clip["after"].norm().item() - 1) < 1e-6
    assert clip["same_way"] > 1 - 1e-9
    cat = res[at["cat_sat"]]["w"]
    np.testing.assert_allclose(cat, [0.05, 0.45, 0.20, 0.15, 0.05, 0.10], atol=1e-12)
    w = res[at["score_functions"]]["weights"]
    np.testing.assert_allclose(w["additive"], w["concat"])
    assert all(np.isclose(v.sum(), 1) for v in w.values())
    _, res = full(5)
    assert res[2]["diff"] < 1e-12 and res[5]["ring_diff"] < 1e-12
    assert res[4]["nbytes"]["multi-head"] == 8 * res[4]["nbytes"]["multi-query"]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("number", LESSONS)
def test_every_lesson_runs_in_every_language_within_80_columns(number, lang):
    text, res = full(number, lang)
    words = source.prose(number, lang)
    steps = runner.steps(number)
    assert len(res) == len(steps)
    for k, cell in enumerate(steps, 1):
        assert f"== {k}. {words.titles[cell.id]}" in text
    prose = "\n".join(ln for ln in text.splitlines() if not ln.startswith("│"))
    if lang == "ja":
        assert len(KANA.findall(prose)) > 200
    elif lang == "zh":
        assert not KANA.search(prose) and prose.count("的") > 10
    else:
        assert not KANA.search(prose) and "的" not in prose
    wide = [ln for ln in text.splitlines() if display_width(ln) > render.PIPED_WIDTH]
    assert wide == [], wide  # prose, code and what it prints: an 80-column terminal never wraps


def _stepped(number: int) -> tuple[runner.Session, list[set[str]]]:
    """Lesson ``number``'s English run (``helpers.lesson_run``'s, once per process): the session
    after all its steps (callers run only in forks of it) and the names bound after each step."""
    return lesson_steps(number)


def _fields(text: str) -> list[str]:
    """The placeholders, each with its format; a conversion (``!r``: a value in quotes, which
    ja/zh use where en writes its own quotes) is the language's typography, not another field,
    and a language may name a number twice."""
    found = re.findall(r"(?<!\{)\{[^{}]+\}(?!\})", text)
    return sorted({re.sub(r"![rsa](?=[:}])", "", f) for f in found})


@pytest.mark.parametrize("number", LESSONS)
def test_the_language_files_agree_and_every_placeholder_is_computed(number):
    assert source.languages(number) == sorted(LANGS)  # a .md file per language, no other
    en = source.prose(number, "en")
    ids = {c.id for c in source.cells(number) if c.kind in ("step", "exercise")}
    assert set(en.titles) == ids  # every step and exercise has words, and nothing else does
    for lang in LANGS[1:]:
        other = source.prose(number, lang)
        assert other.titles.keys() == en.titles.keys(), lang
        assert other.texts.keys() == en.texts.keys(), lang
        for key, text in en.texts.items():
            assert _fields(other.texts[key]) == _fields(text), (lang, key)
        assert [q.answers[:1] for q in other.quiz] == [q.answers[:1] for q in en.quiz], lang
        assert [bool(q.model_answer) for q in other.quiz] == [
            bool(q.model_answer) for q in en.quiz
        ], lang
        assert [len(q.choices) for q in other.quiz] == [len(q.choices) for q in en.quiz], lang
    assert len(en.quiz) >= 3
    assert all((q.answers and q.explanation) or q.model_answer for q in en.quiz)
    s, bound = _stepped(number)
    for cell, names in zip(runner.steps(number), bound, strict=True):  # from the names so far
        assert source.placeholders(en.texts.get(cell.id, "")) <= names, cell.id
    for cell in runner.exercises(number):
        worked = s.fork()
        worked.run_cell(runner.part(number, "solution", cell.id)[0], quiet=True)
        assert source.placeholders(en.texts.get(f"{cell.id}/solution", "")) <= worked.ns.keys()
        for m in runner.part(number, "mistake", cell.id):
            if "answer" in cell.options:  # a value exercise explains its own mistakes
                assert en.texts.get(f"{cell.id}/mistake/{m.options['id']}"), m.options


@pytest.mark.parametrize("number", LESSONS)
def test_the_code_the_terminal_shows_is_the_exported_script(number):
    text, _ = full(number, "zh")
    shown = code_lines(text)
    cells = build(number, "zh", overrides=short(number), run=False)  # its code: as when run
    script = notebooks.to_py([c for c in cells if c.kind != notebooks.NUMBERS])
    width = render.PIPED_WIDTH - len(render.GUTTER)  # a wide line: the same code, re-flowed
    it = iter(codefit.fit_code(script, width, render.fit).splitlines())
    assert all(line in it for line in shown)  # every shown line, in order, in the script
    assert len(shown) > 20


@pytest.mark.parametrize("number", LESSONS)
def test_same_seed_same_output_and_sections_match_the_full_run(number):
    if trains(number):
        pytest.skip("each section would train again: test_training_lessons runs it twice")
    a, _ = full(number, seed=3)
    hint = re.compile(r"\(To see the figure as an image:.*?\)\n", re.S)  # once per run
    for k in range(1, len(runner.steps(number)) + 1):  # each a run apart: the steps before it
        part, _ = _run(number, seed=3, section=k)  # run again (once, for all k), then step k
        assert hint.sub("", part) in hint.sub("", a)


def test_seed_changes_random_examples():
    assert _run(1, seed=0, section=3)[0] != _run(1, seed=1, section=3)[0]
    assert _run(1, seed=0, section=2)[0] == _run(1, seed=1, section=2)[0]  # hand-made


def _exercise_cases():
    return [(n, c) for n in LESSONS for c in runner.exercises(n)]


def _verdict(number: int, cell, code: str, lang: str = "en"):
    """The check of an exercise on ``code`` put in place of its cell, as a notebook runs it:
    after the steps its versions read (that this is what it computes after all of them is
    test_an_exercise_is_checked_after_only_the_steps_it_needs)."""
    s = engine.session(number, lang, overrides=short(number))
    s.steps(runner.needed_steps(number, runner.versions(number, cell)))
    s.run(code, cell.id, quiet=True)
    if "grade" in cell.options:
        return check(s.ns[cell.options["grade"]], seed=0, lang=lang)
    return answers.check_answer(
        number, cell.id, s.ns[cell.options["answer"]], lang=lang, overrides=short(number)
    )


@pytest.mark.parametrize(("number", "cell"), _exercise_cases(), ids=lambda x: getattr(x, "id", x))
def test_exercise_starter_fails_solution_passes_and_wrong_edits_are_named(number, cell):
    starter = _verdict(number, cell, cell.code)
    assert not starter.passed and starter.score < 1
    assert str(starter).strip()  # a readable message
    if "answer" in cell.options:
        assert starter.mistakes == ["unchanged"]
    else:
        assert starter.mistakes == [] and "not written yet" in str(starter)  # not a crash
    solution = runner.part(number, "solution", cell.id)[0]
    assert _verdict(number, cell, solution.code).passed
    for wrong in runner.part(number, "mistake", cell.id):
        r = _verdict(number, cell, wrong.code, lang="ja")
        assert not r.passed and wrong.options["id"] in r.mistakes, (wrong.options, r.mistakes)
        assert KANA.search(r.hints[wrong.options["id"]])  # the hint in the learner's language


@pytest.mark.parametrize(("number", "cell"), _exercise_cases(), ids=lambda x: getattr(x, "id", x))
def test_an_exercise_is_checked_after_only_the_steps_it_needs(number, cell):
    """The check runs only the steps its versions read (lesson 7's never retrain a model); every
    version computes exactly what it computes after all the steps, as in the learner's run."""
    if "answer" not in cell.options:
        pytest.skip("graded by attnlab.grade, which runs no lesson step")
    versions = runner.versions(number, cell)
    assert [v.kind for v in versions[:2]] == ["exercise", "solution"]
    assert len(versions) == 2 + len(runner.part(number, "mistake", cell.id))
    k = runner.needed_steps(number, versions)
    assert k < len(runner.steps(number)) or number < 6
    full = _stepped(number)[0]
    some = runner.Session(number, overrides=short(number))
    some.steps(k)
    for v in versions:
        a, b = full.fork(), some.fork()
        a.run_cell(v, quiet=True)
        b.run_cell(v, quiet=True)
        name, timed = cell.options["answer"], cell.options.get("compare") == "structure"
        key = answers._structure if timed else (lambda x: x)  # timings: their shape and keys
        assert answers.same(key(a.ns[name]), key(b.ns[name])), (v.kind, v.options)
    if number in (6, 7):
        assert k == 0  # checking an answer never trains the lesson's models again


def test_a_check_hands_on_the_setup_constants_it_computes_with():
    """A learner who shortens TIMED in lesson 1's setup passes with the worked answer: the check
    cell hands TIMED on (a check on other lengths fails it). Checks that
    compute nothing with a constant are not given it (lesson 6's never retrain)."""
    timing = next(c for c in runner.exercises(1) if c.id == "timing")
    s = runner.Session(1, overrides={"TIMED": (16, 32, 64)})
    s.steps(0)  # the setup only: the exercise reads no step
    s.run_cell(runner.part(1, "solution", "timing")[0], quiet=True)
    assert sorted(s.ns["times"]) == [16, 32, 64]
    printed, _ = s.run(runner.check_code(1, timing), "check")
    assert answers.WORDS["matches"]("en") in printed
    other = answers.check_answer(1, "timing", s.ns["times"], overrides={"TIMED": (16, 32)})
    assert not other.passed  # checked against other lengths than the learner timed
    assert runner.read_by(1, timing) == ["TIMED"]
    for number in (1, 5, 6, 7):
        for cell in runner.exercises(number):
            if cell is not timing and "answer" in cell.options:
                mentions = "TIMED" in "".join(v.code for v in runner.versions(number, cell))
                assert runner.read_by(number, cell) == (["TIMED"] if mentions else []), cell.id


def test_every_lesson_has_exercises_and_the_named_ones_cover_softmax_axis():
    assert all(runner.exercises(n) for n in LESSONS)
    ids = {m.options["id"] for n in LESSONS for m in source.cells(n) if m.kind == "mistake"}
    assert {"softmax_axis", "missing_keepdims", "head_split_reshape", "missing_tanh"} <= ids


def test_a_wrong_answer_is_not_mistaken_for_a_known_one():
    r = answers.check_answer(1, "query", np.array([0.5, 0.1, 0.1, 0.1, 0.2]))
    assert not r.passed and r.mistakes == []  # differs, but is no known mistake: none named
    html = answers.AnswerReport("x", False, "<b>&", ["m"], {"m": "<script>"})._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;&amp;" in html


@pytest.mark.parametrize("number", [1, 2])
def test_run_exercise_shows_the_starter_and_the_worked_answer(number):
    buf = io.StringIO()
    lessons.run_exercise(number, 1, out=buf)
    cell = runner.exercises(number)[0]
    assert cell.code.splitlines()[0] in code_lines(buf.getvalue())
    assert "--solution" in buf.getvalue()
    buf = io.StringIO()
    lessons.run_exercise(number, 1, out=buf, solution=True, lang="zh")
    solution = runner.part(number, "solution", cell.id)[0]
    shown = runner.code_of(solution, lang="zh", number=number)  # comments in Chinese
    assert shown.splitlines()[0] in code_lines(buf.getvalue())
    assert "通过" in buf.getvalue() and "参考答案" in buf.getvalue()


GRADED = [
    (n, k) for n in (1, 2) for k, c in enumerate(runner.exercises(n), 1) if "grade" in c.options
]


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
@pytest.mark.parametrize(("number", "k"), GRADED)
def test_an_exercises_check_report_fits_the_lesson_width(number, k, lang):
    # the report's first line (name, score, seed, version) ran to 86-90 columns
    for solution in (False, True):
        buf = io.StringIO()  # piped: 80 columns
        lessons.run_exercise(number, k, lang=lang, out=buf, solution=solution)
        text = buf.getvalue()
        wide = [ln for ln in text.splitlines() if display_width(ln) > render.PIPED_WIDTH]
        assert wide == [], wide
        name = runner.exercises(number)[k - 1].options["grade"]
        report = text[text.index(f"\n{name}: ") :]
        assert f"attnlab {attnlab_version}" in " ".join(report.split())


def _quiz(answers_in: str, number: int = 1, lang: str = "en") -> tuple[str, tuple[int, int]]:
    out = io.StringIO()
    result = lessons.run_quiz(number, lang=lang, out=out, inp=io.StringIO(answers_in))
    return out.getvalue(), result


def test_quiz_checks_the_answers_and_scores():
    questions = source.prose(1, "en").quiz
    lines = [
        answers.natural(q)[0] if q.choices else q.answers[0] if q.scored else "?" for q in questions
    ]
    text, (right, total) = _quiz("\n".join(lines) + "\n")
    scored = sum(q.scored for q in questions)
    assert (right, total) == (scored, scored) and f"Score: {scored}/{scored}" in text
    assert text.count("Right.") == scored and "Not quite." not in text
    q = questions[1]
    assert answers.is_right(q, "a") and answers.is_right(q, q.choices[0][3:])
    assert not answers.is_right(q, "b") and not answers.is_right(q, "")
    assert answers.is_right(source.prose(1, "zh").quiz[3], " 1e6 ")


def test_quiz_asks_again_when_the_answer_is_none_of_the_choices():
    q = source.prose(1, "en").quiz[0]
    assert q.choices
    text, (right, total) = _quiz(f"z\nthe moon\n{answers.natural(q)[0]}\n")
    assert text.count("Question 1/") == 1  # the same question, asked again, not graded
    assert text.count("is not one of the choices") == 2
    letters = ", ".join(c[0] for c in q.choices)
    assert f"answer with one of: {letters}" in text
    assert "Right." in text and (right, total) == (1, 1)
    assert not answers.is_valid(q, "z") and answers.is_valid(q, q.choices[-1][3:])


def test_quiz_stops_on_an_empty_answer_or_the_end_of_input_with_the_score_so_far():
    q = source.prose(1, "en").quiz[0]
    text, (right, total) = _quiz(f"{answers.natural(q)[0]}\n\nb\n")
    assert (right, total) == (1, 1) and "Score: 1/1" in text and "Question 2/" in text
    assert "Stopped after 1 of" in text and "Question 3/" not in text
    text, (right, total) = _quiz("", lang="ja")  # end of input at once
    assert (right, total) == (0, 0) and "得点：0/0" in text and "\n答え：" not in text


def test_a_wrong_choice_says_why_that_choice_is_wrong(monkeypatch):
    block = """Which vector is matched against the query?
- a) the value
  why: the value is what a position hands over once it is chosen, not what it is matched by.
- b) the key
- c) the output
answer: b
The key is matched; the value is passed on.
"""
    q = source._question(block)
    assert q.why == (
        "the value is what a position hands over once it is chosen, not what it is matched by.",
        "",
        "",
    )
    prose = source.prose(1, "en")
    fake = type(prose)(prose.title, prose.summary, prose.intro, prose.titles, prose.texts, (q,))
    monkeypatch.setattr(source, "prose", lambda number, lang: fake)
    ok, words = answers.explain(1, 1, "a", "en")
    assert ok is False and "hands over once it is chosen" in words
    assert "The answer: b) the key" in words  # one natural form, not "b | key"
    ok, words = answers.explain(1, 1, "c", "en")  # no why written for c): the answer and why
    assert ok is False and "hands over" not in words and "The key is matched" in words


def test_an_explanation_wrapped_in_the_source_reads_as_one_paragraph():
    """The source wraps at 100 columns; the quiz prints the explanation as the reader's
    paragraph (the terminal wraps it), with no CJK space at the join and items kept apart."""
    block = """何を割りますか？
- a) キー
- b) スコア
answer: b
スコアを √d で
割ります。英語の
line goes on.
- 一つめ
- 二つめ
"""
    q = source._question(block)
    assert q.explanation == "スコアを √d で割ります。英語の line goes on.\n- 一つめ\n- 二つめ"


def test_a_review_question_in_the_learners_words_shows_the_model_answer(monkeypatch):
    block = """Why divide the scores by the square root of d?
model answer: Dot products of random d-dimensional vectors grow like the square root of d;
dividing keeps softmax out of its flat, one-hot region, where gradients vanish.

The lesson's step 4 measured it.
"""
    q = source._question(block)
    assert (
        not q.scored and q.model_answer.startswith("Dot products") and "vanish." in q.model_answer
    )
    assert q.explanation == "The lesson's step 4 measured it."
    prose = source.prose(1, "en")
    fake = type(prose)(prose.title, prose.summary, prose.intro, prose.titles, prose.texts, (q,))
    monkeypatch.setattr(source, "prose", lambda number, lang: fake)
    text, (right, total) = _quiz("they get too big\n")
    mine, model = text.index("they get too big"), text.index("A model answer: Dot products")
    assert mine < model and (right, total) == (0, 0)


def test_the_exported_quiz_reads_right_in_a_script(capsys):
    assert answers.quiz(1, 1, "", "en") is None
    out = capsys.readouterr().out
    assert "run the cell again" not in out and "attnlab lesson 1 --quiz" in out


def test_export_never_overwrites_an_edited_lesson(tmp_path):
    assert main(["lesson", "2", "--export", str(tmp_path), "--format", "py"]) == 0
    script = tmp_path / "lesson2.py"
    assert script.exists() and not (tmp_path / "lesson2.ipynb").exists()
    script.write_text("# my edits\n")
    assert main(["lesson", "2", "--export", str(tmp_path), "--format", "py"]) == 2
    assert script.read_text() == "# my edits\n"
    assert main(["lesson", "2", "--export", str(tmp_path), "--force"]) == 0
    assert "# %%" in script.read_text() and (tmp_path / "lesson2.ipynb").exists()


def test_cli(capsys):
    assert main(["lesson", "list"]) == 0
    out = capsys.readouterr().out
    assert "Multi-head" in out and "--export DIR" in out
    assert main(["lesson", "1", "--section", "2", "--lang", "zh"]) == 0
    assert "查询与键" in capsys.readouterr().out
    assert main(["lesson", "9"]) == 2
    assert "no lesson 9" in capsys.readouterr().err
    assert main(["lesson", "1", "--section", "42"]) == 2
    assert main(["lesson", "1", "--solution"]) == 2
    assert "--solution goes with --exercise" in capsys.readouterr().err
    assert main(["lesson", "1", "--exercise", "9"]) == 2
    capsys.readouterr()
    assert main(["lesson", "1", "--section", "0"]) == 0  # the lesson numbers its setup 0
    out = capsys.readouterr().out
    assert "0. Setup" in out and "SEED = 0" in out and "1. " not in out
    assert main(["lesson", "1", "--format", "py"]) == 2  # not silently ignored
    assert "--format: only with --export DIR" in capsys.readouterr().err


def test_an_output_path_that_cannot_be_a_folder_is_one_line_before_any_output(capsys, tmp_path):
    (tmp_path / "afile").write_text("mine\n")
    for flag in ("--export", "--plots"):
        assert main(["lesson", "1", flag, str(tmp_path / "afile" / "sub")]) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.splitlines()) == 1, (flag, err)
        assert "afile" in err and "a file stands where a folder is needed" in err
    assert (tmp_path / "afile").read_text() == "mine\n"


def test_notebook_cells_follow_the_lesson():
    cells = built(1, "ja")
    code = [c.text for c in cells if c.kind == "code"]
    assert code[0].endswith("import attnlab") and "%pip" not in code[0]
    assert 'LANG = "ja"' in code[1] and "SEED = 0" in code[1]
    assert any("check_answer(1, " in c for c in code) and any("print(check(" in c for c in code)
    assert sum("quiz(1, " in c for c in code) == len(source.prose(1, "ja").quiz)
    assert any("<details>" in c.text for c in cells if c.kind == "markdown")
    assert len(
        json.loads(notebooks.to_ipynb(cells))["cells"]
    )  # as the book writes them == len(cells)


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_code_is_highlighted_on_a_terminal_and_plain_when_piped(monkeypatch):
    from attnlab.lessons.render import code_block, wants_colour

    code = 'for d in (16, 64):  # widths\n    print("d =", d)'
    coloured = code_block(code, colour=True)
    assert "\x1b[" in coloured
    plain = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert code_lines(plain) == code.splitlines()  # colours only, the text unchanged
    assert code_lines(code_block(code, colour=False)) == code.splitlines()
    assert "\x1b[" not in code_block(code, colour=False)
    assert wants_colour(Tty()) and not wants_colour(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_colour(Tty())
    out = Tty()
    render.code(render.console(out), code)
    render.prose(render.console(out), "**bold** and `code`")
    assert "\x1b[" not in out.getvalue() and "bold and code" in out.getvalue()


def test_code_is_shown_exactly_as_written_piped_or_on_a_terminal():
    """Every line that fits behind the gutter as written: a blank line kept, square brackets
    and colons never read as markup or emoji; coloured only on a terminal. A line wider than
    the console is the same program re-flowed to fit (tests/lessons/test_codefit.py)."""
    code = 'x = "[bold]a[/bold] :smile:"\n\ny = ' + "1 + " * 10 + "1  # one line"
    long = "z = " + "1 + " * 40 + "1  # one long line"
    for out in (io.StringIO(), Tty()):
        render.code(render.console(out), code + "\n" + long)
        shown = code_lines(re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue()))
        assert ("\x1b[" in out.getvalue()) == isinstance(out, Tty)
        assert shown[:3] == code.splitlines()
        assert shown[3] == "# one long line"  # the comment above, the sum in rows that fit
        assert ast.dump(ast.parse("\n".join(shown))) == ast.dump(ast.parse(code + "\n" + long))
        assert max(display_width(GUTTER + ln) for ln in shown) <= render.console(out).width
    prose = io.StringIO()
    render.prose(render.console(prose), "[bold]a[/bold] :smile: " + "word " * 60)
    shown = prose.getvalue()
    assert "[bold]a[/bold]" in shown and ":smile:" in shown  # literal text, as written
    assert max(display_width(ln) for ln in shown.splitlines()) <= render.PIPED_WIDTH
    assert len(shown.splitlines()) >= 4  # wrapped to the piped width


def test_prose_is_markdown_tables_print_as_tables():
    text = "What the lesson showed:\n\n| step | what |\n|---|---|\n| mask | -inf before softmax |\n"
    out = io.StringIO()
    render.prose(render.console(out), text)
    shown = out.getvalue()
    assert "|---" not in shown and "mask" in shown and "-inf before softmax" in shown
    assert "━" in shown or "─" in shown  # a drawn table
    assert all(line == line.rstrip() for line in shown.splitlines())  # no padding when piped


def test_wide_text_wraps_between_characters_not_only_at_spaces():
    ja = "ここまでを 6 行にまとめます：射影、採点、スケーリング、マスク、softmax、重み付き和。" * 3
    out = io.StringIO()
    render.prose(render.console(out), ja)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3 and all(display_width(ln) <= render.PIPED_WIDTH for ln in lines)
    assert all(display_width(ln) >= render.PIPED_WIDTH - 12 for ln in lines[:-1])  # full lines
    assert not any(ln.startswith(("。", "、")) for ln in lines)
    assert render.join_lines("一行目の文が\n続きます。\nand English\nwords") == (
        "一行目の文が続きます。and English words"
    )
    # a line that starts with a code span or a minus sign is still paragraph text; "- " is not
    assert render.join_lines("変数\n`w` は重み、\n-inf は隠す。\n- 一つ目") == (
        "変数 `w` は重み、-inf は隠す。\n- 一つ目"
    )
    # a wrapped line never starts with "+ " (Markdown would show a bullet)
    formula = "位置 " + "の値 " * 10 + "PE[pos + k] は PE[pos] の線形写像です。"
    for width in range(20, 60):
        rows = render.wrap_wide(formula, width).split("\\\n")
        assert not any(r.lstrip().startswith(("+ ", "- ", "。")) for r in rows[1:]), (width, rows)
        assert "".join(rows).replace(" ", "") == formula.replace(" ", "")
    # two marks in a row that cannot start a line ("）、"): neither starts one, at any width
    closing = "キーなら (B, 1, 1, S)（パディング）、系列ごとなら (B, 1, T, S)（表）。" * 2
    for width in range(16, 60):
        rows = render.wrap_wide(closing, width).split("\\\n")
        assert not any(r[0] in render.NO_BREAK_BEFORE for r in rows[1:]), (width, rows)
        assert all(display_width(r) <= width for r in rows), (width, rows)


def test_exported_markdown_has_no_break_a_browser_would_show_as_a_space():
    nb = notebooks.to_notebook(built(1, "zh"))  # (on the tests' short TIMED)
    markdown = "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    raw = "".join(source.prose(1, "zh").texts.values())
    cjk_break = re.compile(f"[{render.CJK}]\n[{render.CJK}]|[。，：]\n[A-Za-z{render.CJK}]")
    assert cjk_break.search(raw) and not cjk_break.search(markdown)


def test_figures_print_as_text_and_draw_as_images():
    w = np.array([[1.0, 0.0], [0.25, 0.75]])
    h = show.heat(w, ["床", "前"], ["床", "前"], title="重み")
    text = h.text()
    assert text.splitlines()[0] == "重み" and "床" in text and "█" in text and "·" in text
    assert text.splitlines()[-1].split()[:10] == "· ≤0.00 ░ <0.25 ▒ <0.50 ▓ <0.75 █ ≥0.75".split()
    assert text.splitlines()[2:4] == ["床 ██··", "前 ▒▒██"]  # 0.25 is the second step up
    fig = h.figure()
    assert fig.axes[0].get_title() == "重み"
    b = show.bars({"raw": [0.9, 0.3], "/√d": [0.5, 0.4]}, ["16", "64"], title="max weight")
    lines = b.text().splitlines()
    assert lines[0] == "max weight" and len(lines) == 5
    assert lines[1].count("█") > lines[2].count("█")  # 0.9 is longer than 0.5
    c = show.curve({"train": [4.0, 3.0, 2.5, 2.2]}, xlabel="step", title="loss")
    assert "4 → 2.2" in c.text() and "█" in c.text() and "▁" in c.text()
    assert c.figure().axes[0].get_xlabel() == "step"
    two = show.curve({"train": [4.0, 3.0, 2.5, 2.2], "val": ([2, 4], [3.5, 2.6])})
    lines = two.figure().axes[0].lines
    assert list(lines[1].get_xdata()) == [2, 4] and "3.5 → 2.6" in two.text()
    big = show.heat(np.random.default_rng(0).random((50, 64)), annotate=False)
    assert all(display_width(ln) <= 80 for ln in big.text().splitlines())


def test_plot_prints_the_text_figure_and_where_to_get_the_image(capsys, tmp_path):
    LANG = "zh"  # noqa: F841 (plot reads the caller's LANG, as lesson code has it)
    show.plot("lesson1_x", show.heat(np.eye(2)))
    out = capsys.readouterr().out
    assert "█" in out and "attnlab lesson 1 --plots DIR" in out and "图片" in out
    with show.plotting(tmp_path):
        show.plot("lesson1_x", show.bars({"a": [1, 2]}, ["x", "y"]))
    out = capsys.readouterr().out
    assert "█" in out and (tmp_path / "lesson1_x.png").exists()
    with show.plotting(quiet=True):
        show.plot("lesson1_y", show.heat(np.eye(2)))
    assert capsys.readouterr().out == ""


def test_importing_viz_leaves_matplotlibs_backend_alone():
    code = "import attnlab.viz, matplotlib; print(matplotlib.get_backend())"
    env = {**__import__("os").environ, "MPLBACKEND": "svg"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().lower() == "svg"  # not switched to Agg (a kernel keeps inline)


def test_zh_title_reads_naturally():
    assert engine.title(1, "zh").startswith("第 1 课：")
    assert engine.title(1, "en").startswith("Lesson 1: ")


def test_setup_constants_can_be_overridden():
    setup = source.SourceCell("setup", "", 'SEED = 0\nLANG = "en"\nSTEPS = 600  # training steps')
    code = runner.code_of(setup, 4, "ja", {"STEPS": 5})
    assert code == 'SEED = 4\nLANG = "ja"\nSTEPS = 5  # training steps'
    with pytest.raises(lessons.engine.UserError, match="no constant WIDTH"):
        runner.code_of(setup, overrides={"WIDTH": 3})
    assert main(["lesson", "1", "--steps", "5"]) == 2  # lesson 1 trains nothing


def test_a_step_without_code_shows_only_its_prose():
    steps = runner.steps(1)
    assert steps[-1].id == "recap" and not steps[-1].code.strip()  # lesson 1 ends in a recap
    prose = source.prose(1, "en")
    recap, title = prose.texts["recap"], prose.titles["recap"]
    first_row = next(line for line in recap.splitlines() if line.startswith("|"))
    words = [w.strip() for w in first_row.strip("|").split("|")]
    n = len(steps)
    text, res = _run(1, section=n)
    assert title in text and all(w in text for w in words) and "|---" not in text
    assert code_lines(text) == [] and res == {n: {}}
    recap_cells = [c for c in build(1, "en", run=False) if title in c.text]  # words only
    assert len(recap_cells) == 1 and recap_cells[0].kind == "markdown"
    assert first_row in recap_cells[0].text


def test_comments_are_translated_where_a_catalogue_has_them(monkeypatch):
    code = "x = 1  # one\n# two\ny = '# not a comment'  # three"
    monkeypatch.setattr(comments, "catalogue", lambda n, lang: {"one": "一つ", "three": "三つ"})
    assert comments.translate(code, 1, "ja") == (
        "x = 1  # 一つ\n# two\ny = '# not a comment'  # 三つ"
    )
    s = engine.session(1, "ja")
    shown = s.code(runner.steps(1)[0])
    assert shown == comments.translate(runner.steps(1)[0].code, 1, "ja")


def _shown_comments(number: int) -> set[str]:
    kinds = ("setup", "step", "exercise", "solution")
    return {
        text
        for cell in source.cells(number)
        if cell.kind in kinds
        for *_, text in comments.found(cell.code)
        if text
    }


@pytest.mark.parametrize("lang", LANGS[1:])
@pytest.mark.parametrize("number", LESSONS)
def test_every_code_comment_has_a_translation(number, lang):
    path = source._content(number) / f"comments.{lang}.json"
    assert path.is_file(), f"{path} missing"
    catalogue = json.loads(path.read_text(encoding="utf-8"))
    missing = sorted(_shown_comments(number) - catalogue.keys())
    assert not missing, missing
    assert all(str(v).strip() for v in catalogue.values())


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("number", LESSONS)
def test_prose_lines_fit_100_columns(number, lang):
    text = (source._content(number) / f"{lang}.md").read_text(encoding="utf-8")
    long = [
        (i, display_width(line))
        for i, line in enumerate(text.splitlines(), 1)
        if display_width(line) > 100 and not line.lstrip().startswith("|")  # tables reflow
    ]
    assert not long, long
