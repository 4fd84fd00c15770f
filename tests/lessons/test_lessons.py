import io
import re
import struct

import numpy as np
import pytest

from attnlab import lessons
from attnlab.cli import main
from attnlab.grade import check
from attnlab.lessons import answers, runner, source
from attnlab.lessons.export import build
from attnlab.lessons.render import code_lines

KANA = re.compile(r"[\u3040-\u30ff]")  # hiragana/katakana: Japanese prose
HAN = re.compile(r"[\u4e00-\u9fff]")
LESSONS = source.lessons()
LANGS = ["en", "ja", "zh"]


def _run(*args, **kw) -> tuple[str, dict]:
    buf = io.StringIO()
    results = lessons.run(*args, out=buf, **kw)
    return buf.getvalue(), results


def test_lesson1_section2_golden_numbers_from_the_course():
    text, res = _run(1, section=2)
    np.testing.assert_allclose(res[2]["scores"], [0.1, 0.0, 0.9, 1.0, 0.8])
    assert "{'床': 0.1, '前': 0.0, '明': 0.9, '月': 1.0, '光': 0.8}" in text
    assert "{'床': 0.12, '前': 0.11, '明': 0.26, '月': 0.29, '光': 0.23}" in text
    assert "{'床': 0.01, '前': 0.0, '明': 0.3, '月': 0.5, '光': 0.18}" in text
    assert "(0.29)" in text and "0.50" in text  # the prose's numbers come from the run


def test_lesson1_other_steps_compute_what_they_claim():
    _, res = _run(1)
    np.testing.assert_allclose(res[1]["W"][3], [0.25] * 4 + [0])
    a = res[3]["a"]
    assert np.allclose(a.sum(1), 1) and np.all(np.triu(a, 1) == 0)
    assert all(r > 0.75 for r in res[4]["raw_max"]) and all(s < 0.6 for s in res[4]["scaled_max"])
    assert 0 < res[5]["diff"] < 1e-5  # float32 vs torch: rounding only
    assert res[5]["out"].shape == (5, 8)


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
    _, res = _run(3)
    assert res[1]["d_k"] == 64 and res[1]["diff"] < 1e-10
    assert res[3]["plain"] < 1e-12 and res[3]["with_pe"] > 0.1
    assert res[5]["residual"] < 1e-10 and res[5]["exact"] < 1e-10
    assert np.ptp(res[5]["dots"]) < 1e-12 and res[6]["far"] < 1e-10
    _, res = _run(4)
    np.testing.assert_allclose(res[5]["w"], [0.05, 0.45, 0.20, 0.15, 0.05, 0.10], atol=1e-12)
    w = res[2]["weights"]
    np.testing.assert_allclose(w["additive"], w["concat"])
    assert all(np.isclose(v.sum(), 1) for v in w.values())
    _, res = _run(5)
    assert res[2]["diff"] < 1e-12 and res[5]["ring_diff"] < 1e-12
    assert res[4]["nbytes"]["multi-head"] == 8 * res[4]["nbytes"]["multi-query"]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("number", LESSONS)
def test_every_lesson_runs_in_every_language(number, lang):
    text, res = _run(number, lang=lang)
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


def _fields(text: str) -> list[str]:
    return sorted(re.findall(r"(?<!\{)\{[^{}]+\}(?!\})", text))


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
        assert [q.answers[0] for q in other.quiz] == [q.answers[0] for q in en.quiz], lang
        assert [len(q.choices) for q in other.quiz] == [len(q.choices) for q in en.quiz], lang
    assert len(en.quiz) >= 3 and all(q.answers and q.explanation for q in en.quiz)
    s = runner.Session(number)
    for cell in source.cells(number):
        if cell.kind in ("setup", "step"):
            s.run_cell(cell, quiet=True)
            assert source.placeholders(en.texts.get(cell.id, "")) <= s.ns.keys(), cell.id
    for cell in runner.exercises(number):
        worked = s.fork()
        worked.run_cell(runner.part(number, "solution", cell.id)[0], quiet=True)
        assert source.placeholders(en.texts.get(f"{cell.id}/solution", "")) <= worked.ns.keys()
        for m in runner.part(number, "mistake", cell.id):
            if "answer" in cell.options:  # a value exercise explains its own mistakes
                assert en.texts.get(f"{cell.id}/mistake/{m.options['id']}"), m.options


@pytest.mark.parametrize("number", LESSONS)
def test_the_code_the_terminal_shows_is_the_exported_script(number, tmp_path):
    text, _ = _run(number, lang="zh")
    shown = code_lines(text)
    (script,) = lessons.export(number, tmp_path, "zh", "py")
    lines = script.read_text(encoding="utf-8").splitlines()
    it = iter(lines)
    assert all(line in it for line in shown)  # every shown line, in order, in the script
    assert len(shown) > 20


@pytest.mark.parametrize("number", LESSONS)
def test_same_seed_same_output_and_sections_match_the_full_run(number):
    a, _ = _run(number, seed=3)
    b, _ = _run(number, seed=3)
    assert a == b
    for k in range(1, len(runner.steps(number)) + 1):
        part, _ = _run(number, seed=3, section=k)
        assert part in a


def test_seed_changes_random_examples():
    assert _run(1, seed=0, section=3)[0] != _run(1, seed=1, section=3)[0]
    assert _run(1, seed=0, section=2)[0] == _run(1, seed=1, section=2)[0]  # hand-made


def _exercise_cases():
    return [(n, c) for n in LESSONS for c in runner.exercises(n)]


def _verdict(number: int, cell, code: str, lang: str = "en"):
    """The check of an exercise on ``code`` put in place of its cell, as a notebook runs it."""
    s = runner.Session(number, lang=lang)
    s.steps()
    s.run(code, cell.id, quiet=True)
    if "grade" in cell.options:
        return check(s.ns[cell.options["grade"]], seed=0, lang=lang)
    return answers.check_answer(number, cell.id, s.ns[cell.options["answer"]], lang=lang)


@pytest.mark.parametrize(("number", "cell"), _exercise_cases(), ids=lambda x: getattr(x, "id", x))
def test_exercise_starter_fails_solution_passes_and_wrong_edits_are_named(number, cell):
    starter = _verdict(number, cell, cell.code)
    assert not starter.passed and starter.score < 1
    assert str(starter).strip()  # a readable message
    if "answer" in cell.options:
        assert starter.mistakes == ["unchanged"]
    else:
        assert starter.mistakes == ["crash"] and "NotImplementedError" in str(starter)
    solution = runner.part(number, "solution", cell.id)[0]
    assert _verdict(number, cell, solution.code).passed
    for wrong in runner.part(number, "mistake", cell.id):
        r = _verdict(number, cell, wrong.code, lang="ja")
        assert not r.passed and wrong.options["id"] in r.mistakes, (wrong.options, r.mistakes)
        assert KANA.search(r.hints[wrong.options["id"]])  # the hint in the learner's language


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
    assert solution.code.splitlines()[0] in code_lines(buf.getvalue())
    assert "通过" in buf.getvalue() and "参考答案" in buf.getvalue()


def test_quiz_checks_the_answers_and_scores():
    n = len(source.prose(1, "en").quiz)
    out = io.StringIO()
    right, total = lessons.run_quiz(1, out=out, inp=io.StringIO("b\nb\nB)\n1,000,000\n"))
    text = out.getvalue()
    assert (right, total) == (3, n) and f"Score: 3/{n}" in text
    assert text.count("Right.") == 3 and text.count("Not quite.") == 1
    out = io.StringIO()
    right, _ = lessons.run_quiz(1, lang="ja", out=out, inp=io.StringIO(""))  # no answers
    assert right == 0 and out.getvalue().count("\n答え：") == n and "得点: 0/" in out.getvalue()
    q = source.prose(1, "en").quiz[1]
    assert answers.is_right(q, "a") and answers.is_right(q, q.choices[0][3:])
    assert not answers.is_right(q, "b") and not answers.is_right(q, "")
    assert answers.is_right(source.prose(1, "zh").quiz[3], " 1e6 ")


def test_plots_are_written_as_png(tmp_path):
    for number in LESSONS:
        lessons.run(number, plots=tmp_path, out=io.StringIO())
    pngs = sorted(tmp_path.glob("*.png"))
    assert len(pngs) >= 10
    for p in pngs:
        data = p.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, p
        width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
        assert width <= 1600 and height <= 1600, (p.name, width, height)
    assert not list(tmp_path.glob(".*"))  # no temp files left behind


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


def test_notebook_cells_follow_the_lesson():
    cells = build(1, "ja")
    code = [c.text for c in cells if c.kind == "code"]
    assert code[0].endswith("import attnlab") and "%pip install attnlab" in code[0]
    assert 'LANG = "ja"' in code[1] and "SEED = 0" in code[1]
    assert any("check_answer(1, " in c for c in code) and any("print(check(" in c for c in code)
    assert sum("quiz(1, " in c for c in code) == len(source.prose(1, "ja").quiz)
    assert any("<details>" in c.text for c in cells if c.kind == "markdown")


def test_code_is_highlighted_on_a_terminal_and_plain_when_piped(monkeypatch):
    from attnlab.lessons.render import code_block, highlight, wants_colour

    code = 'for d in (16, 64):  # widths\n    print("d =", d)'
    coloured = highlight(code)
    assert "\x1b[1;34mfor\x1b[0m" in coloured and "\x1b[36m16\x1b[0m" in coloured
    assert '\x1b[32m"d ="\x1b[0m' in coloured and "\x1b[2;37m# widths\x1b[0m" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == code  # colours only, the text unchanged
    assert code_lines(code_block(code, colour=False)) == code.splitlines()

    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert wants_colour(Tty()) and not wants_colour(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_colour(Tty())
