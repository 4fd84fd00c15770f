"""The grader against a corpus: file names say exercise__expected__description.

expected = "pass" (must pass), "fail" (must fail, any mistake), or the mistake id it must name.
"""

import csv
import io
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from attnlab.cli import main
from attnlab.grade import EXERCISES, grade_dir, grade_file, grade_source, write_starter
from attnlab.grade.submission import notebook_source

CORPUS = Path(__file__).parent / "submissions"
FILES = sorted(p for p in CORPUS.iterdir() if p.suffix in (".py", ".ipynb"))


def _expect(p: Path) -> tuple[str, str]:
    exercise, expected, _ = p.stem.split("__")
    return exercise, expected


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_corpus(path):
    exercise, expected = _expect(path)
    # an endless loop burns its whole timeout on a core: one second is as good as ten for it
    r = grade_file(path, exercise, timeout=1 if "timeout" in path.stem else 10)
    assert r.exercise == exercise
    if expected == "pass":
        assert r.passed, [c for c in r.checks if not c.passed]
        assert r.score == 1.0 and r.mistakes == []
    else:
        assert not r.passed and r.score < 1.0
        if expected != "fail":
            assert r.mistakes[0] == expected, r.mistakes
            assert r.hints[expected]
            # never a wrong name: every id given fits this file (a crash on some cases may add
            # "crash"; a NaN on ordinary inputs is its own evidence)
            assert set(r.mistakes) <= {expected, "crash", "nan_output", "wrong_return"}, r.mistakes


def test_every_mistake_id_in_the_issue_is_covered_by_the_corpus():
    named = {_expect(p)[1] for p in FILES}
    required = {
        "softmax_axis",
        "missing_keepdims",
        "missing_scale",
        "wrong_scale",
        "mask_orientation",
        "mask_ignored",
        "mask_after_softmax",
        "unstable_softmax",
        "transposed_weights",
        "mutates_input",
        "wrong_return",
        "nan_output",
        "timeout",
        "crash",
        "syntax_error",
        "forbidden_import",
    }
    assert required <= named
    assert {_expect(p)[0] for p in FILES if _expect(p)[1] == "pass"} == set(EXERCISES)


def _grade(capfd, *args) -> subprocess.CompletedProcess:
    """``attnlab grade ARGS`` through ``main``, in this process; what reached file descriptors
    1 and 2 (a sandboxed child's too, had it inherited them) is its stdout and stderr."""
    capfd.readouterr()
    status = main(["grade", *map(str, args)])
    out = capfd.readouterr()
    return subprocess.CompletedProcess(args, status, out.out, out.err)


def test_forged_output_cannot_pass_and_json_stdout_is_only_the_report(capfd):
    path = CORPUS / "self_attention__fail__forged_report.py"
    out = _grade(capfd, path, "--format", "json")
    assert out.returncode == 1
    report = json.loads(out.stdout)  # the child's printed JSON never reaches our stdout
    assert report["passed"] is False and report["exercise"] == "self_attention"
    assert set(report) >= {"exercise", "passed", "score", "checks", "mistakes"}


def test_exit_codes_and_formats(tmp_path, capfd):
    good = CORPUS / "self_attention__pass__vectorized.py"

    def run(*args):
        return _grade(capfd, *args)

    assert run(good).returncode == 0
    out = run(good, "--format", "junit")
    suite = ET.fromstring(out.stdout).find("testsuite")
    assert suite.get("failures") == "0" and int(suite.get("tests")) > 5
    bad = run(
        CORPUS / "self_attention__missing_scale__no_sqrt.py", "--format", "junit", "--lang", "ja"
    )
    assert (
        bad.returncode == 1 and ET.fromstring(bad.stdout).find("testsuite").get("failures") != "0"
    )
    assert run(tmp_path / "nope.py").returncode == 2
    assert run(good, "--exercise", "nonsense").returncode == 2
    unknown = tmp_path / "x.py"
    unknown.write_text("def f(): pass\n")
    r = run(unknown)
    assert r.returncode == 2 and "--exercise" in r.stderr


CLASS = ["pass__loops", "pass__notebook", "missing_scale__no_sqrt", "mask_orientation__triu"]
CLASS += ["crash__typo", "forbidden_import__torch", "syntax_error__missing_colon"]


def test_class_mode_csv(tmp_path, capsys):
    # a class of seven (each file's own grade is test_corpus's): passes, mistakes, a crash, a
    # notebook, a file that does not parse
    for p in FILES:
        if p.stem.removeprefix("self_attention__") in CLASS:
            (tmp_path / p.name).write_bytes(p.read_bytes())
    assert len(list(tmp_path.iterdir())) == len(CLASS)
    args = ["grade", str(tmp_path), "--exercise", "self_attention", "--format", "csv"]
    assert main(args) == 1
    out = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(out.out)))
    assert len(rows) == len(list(tmp_path.iterdir()))
    by_file = {Path(r["file"]).stem: r for r in rows}
    assert by_file["self_attention__pass__loops"]["passed"] == "1"
    assert by_file["self_attention__missing_scale__no_sqrt"]["mistakes"].startswith("missing_scale")
    assert "submissions passed" in out.err and "most common mistakes" in out.err


def test_hanging_submission_is_stopped_quickly():
    r = grade_source(
        "import time\ndef causal_mask(T):\n    time.sleep(60)\n", "causal_mask", timeout=1
    )
    assert r.mistakes == ["timeout"] and not r.passed


def test_memory_hog_is_a_report_not_a_grader_crash():
    src = "import numpy as np\ndef causal_mask(T):\n    return np.ones(10**11)\n"
    r = grade_source(src, "causal_mask", memory_mb=1024)
    assert not r.passed and r.mistakes == ["crash"]
    assert "MemoryError" in " ".join(c.message for c in r.checks)


def test_garbage_never_crashes_the_grader(tmp_path):
    for src in [
        "",
        "\x00\x01",
        "def self_attention(:",
        "raise SystemExit(0)\ndef self_attention(*a): pass",
        "import os\nos._exit(0)\ndef self_attention(*a): pass",
        "def self_attention(*a):\n    return object()",
        "def self_attention(*a):\n    return ('a', 'b')",
    ]:
        r = grade_source(src, "self_attention")
        assert not r.passed and r.mistakes, src


def test_starter_file_and_exercise_list(tmp_path, capsys):
    from attnlab.cli import main

    path = write_starter("self_attention", tmp_path)
    assert path.name == "self_attention.py" and "TODO" in path.read_text()
    with pytest.raises(FileExistsError):
        write_starter("self_attention", path)
    r = grade_file(path)
    assert not r.passed and r.mistakes == []  # NotImplementedError until filled in: not a crash
    assert main(["exercise", "start", "self_attention", str(path)]) == 2
    assert main(["exercise", "start", "nonsense", str(tmp_path / "n.py")]) == 2
    capsys.readouterr()
    assert main(["exercise", "start", "causal_mask", "-o", str(tmp_path / "mine.py")]) == 0
    assert "def causal_mask" in (tmp_path / "mine.py").read_text()  # -o is the starter's path
    assert capsys.readouterr().out.splitlines()[-1].endswith(f"attnlab grade {tmp_path}/mine.py")
    twice = ["exercise", "start", "causal_mask", str(tmp_path / "a.py"), "-o", "b.py"]
    assert main(twice) == 2 and not (tmp_path / "a.py").exists()
    assert "give the starter's path once" in capsys.readouterr().err


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_the_exercise_list_fits_80_columns_with_every_exercise_and_its_lesson(
    lang, capsys, monkeypatch
):
    from attnlab.cli import main
    from attnlab.grade import EXERCISES
    from attnlab.tables import display_width

    monkeypatch.setenv("COLUMNS", "80")
    assert main(["exercise", "list", "--lang", lang]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(display_width, lines)) <= 80
    rows = {ln.split()[0]: ln.split()[1:] for ln in lines[2:] if not ln.startswith(" ")}
    assert list(rows) == list(EXERCISES)
    for name, ex in EXERCISES.items():  # the lesson, then the summary's first words
        words = ex.summary(lang).split()
        shown = rows[name][1:] if ex.lesson else rows[name]
        assert (rows[name][0] == str(ex.lesson)) == bool(ex.lesson), name
        assert "".join(words).startswith("".join(shown)), name
    text = "".join("".join(ln.split()) for ln in lines[2:])
    assert all("".join(ex.summary(lang).split()) in text for ex in EXERCISES.values())


def test_notebook_extraction_skips_magics_and_shell():
    nb = {
        "cells": [
            {"cell_type": "code", "source": ["%pip install numpy\n", "x = 1\n", "!ls"]},
            {"cell_type": "markdown", "source": "not code"},
            {"cell_type": "code", "source": "%%bash\necho hi"},
            {"cell_type": "code", "source": "y = x + 1"},
        ]
    }
    src = notebook_source(json.dumps(nb))
    assert "x = 1" in src and "y = x + 1" in src and "pip" not in src and "echo" not in src
    ns: dict = {}
    exec(src, ns)
    assert ns["y"] == 2


def test_hints_in_japanese():
    r = grade_file(CORPUS / "self_attention__missing_scale__no_sqrt.py", lang="ja")
    assert "√d_k" in r.hints["missing_scale"]


@pytest.mark.parametrize(
    ("lang", "verdict", "check", "summary"),
    [("ja", "不合格", "マスクあり", "件中"), ("zh", "未通过", "有掩码", "份提交中")],
)
def test_reports_speak_the_learners_language(lang, verdict, check, summary, tmp_path):
    from attnlab.grade import report
    from attnlab.grade.words import check_name

    r = grade_file(CORPUS / "self_attention__missing_scale__no_sqrt.py", lang=lang, seed=1)
    text = report.text(r)  # the language it was graded in
    assert text.splitlines()[-1] == verdict and check in text and "masked" not in text
    assert str(r) == text and verdict in r._repr_html_()
    assert report.text(r, "en").splitlines()[-1] == "FAILED"  # any language on demand
    assert json.loads(report.to_json(r))["checks"][0]["name"] == r.checks[0].name  # ids stay
    assert summary in report.class_summary([r, r], lang) and "mistakes" not in report.class_summary(
        [r], lang
    )
    for name in (c.name for c in r.checks):  # every check name is translated, numbers kept
        shown = check_name(name, lang)
        assert not set(shown.split()) & {"masked", "unmasked", "random", "fixed", "inputs"}
        assert [t for t in name.split() if "=" in t] == [t for t in shown.split() if "=" in t]
    write_starter("self_attention", tmp_path / "s.py", lang=lang)
    assert {"ja": "採点", "zh": "评分"}[lang] in (tmp_path / "s.py").read_text(encoding="utf-8")


def test_same_seed_same_cases_and_grade_dir_runs_in_parallel(tmp_path):
    (tmp_path / "a.py").write_bytes((CORPUS / "causal_mask__pass__tril.py").read_bytes())
    (tmp_path / "b.py").write_bytes(
        (CORPUS / "causal_mask__mask_orientation__triu.py").read_bytes()
    )
    reports = grade_dir(tmp_path, jobs=2)
    assert [r.passed for r in reports] == [True, False]
    a = grade_file(tmp_path / "a.py", seed=5)
    assert [c.name for c in a.checks] == [
        c.name for c in grade_file(tmp_path / "a.py", seed=5).checks
    ]


def test_a_file_that_is_not_python_is_named_as_such(tmp_path, capsys):
    """An exported HTML page handed to the grader: one line saying what it takes (exit 2);
    a Python file whose function cannot be told says which functions it looks for; a .txt
    that defines an exercise is graded as Python."""
    page = tmp_path / "pg.html"
    page.write_text("<html><body>attention</body></html>")
    assert main(["grade", str(page)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"attnlab grade: error: {page}: expected a Python file (.py) or a notebook (.ipynb)"
    ]
    (tmp_path / "none.py").write_text("x = 1\n")
    assert main(["grade", str(tmp_path / "none.py")]) == 2
    assert "cannot tell which exercise" in capsys.readouterr().err
    text = tmp_path / "mine.txt"
    text.write_text((CORPUS / "self_attention__pass__vectorized.py").read_text())
    assert main(["grade", str(text)]) == 0


def _closing_first(line: str) -> bool:
    return line.lstrip()[:1] in "、。，．；：！？）」』】〉》”’" and line.strip() != ""


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_report_fits_the_terminal_it_is_read_in(lang):
    """A failed case's line (two errors and where they are: over 200 columns) broken to the
    width, CJK counted as two columns: every character kept in order, each continuation under
    the text after FAIL, no line starting with closing punctuation; a short report unchanged."""
    from attnlab.grade import report
    from attnlab.tables import display_width, fit

    r = grade_file(CORPUS / "self_attention__missing_scale__no_sqrt.py", lang=lang)
    text = report.text(r)
    assert max(display_width(line) for line in text.splitlines()) > 200
    label = "  FAIL  " if lang == "en" else "  不合格  "
    for width in (80, 50):
        lines = fit(text, width).splitlines()
        assert max(display_width(line) for line in lines) <= width
        assert "".join(fit(text, width).split()) == "".join(text.split())
        assert not any(_closing_first(line) for line in lines)
        after = [lines[i + 1] for i, line in enumerate(lines[:-1]) if line.startswith(label)]
        assert after and all(
            line.startswith(" " * display_width(label)) or line.startswith(label) for line in after
        )
    assert fit(text, 1000) == text
    narrow = "  不合格  " + "注意力" * 20 + "。x" * 5  # very narrow terminals: still nothing lost
    for width in range(3, 30):
        assert "".join(fit(narrow, width).split()) == "".join(narrow.split()), width
    long_word = "x" * 130  # wider than the room: cut, nothing lost
    assert fit(f"  FAIL  {long_word} end", 60).replace("\n", "").replace(" ", "") == (
        f"FAIL{long_word}end"
    )


def test_the_grade_command_breaks_lines_on_a_terminal_only(tmp_path):
    """What a learner sees: `attnlab grade` in an 80-column terminal (a pty) prints no line
    wider than 80 columns; into a pipe, one line per check, as before."""
    import pty

    path = CORPUS / "self_attention__missing_scale__no_sqrt.py"
    cmd = [sys.executable, "-m", "attnlab", "grade", str(path)]
    env = {**os.environ, "COLUMNS": "80", "LINES": "24"}
    piped = subprocess.run(cmd, capture_output=True, text=True, env=env)
    out = bytearray()
    pid, fd = pty.fork()
    if pid == 0:  # the child: attnlab on the terminal
        os.execve(sys.executable, cmd, env)
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the terminal closed with the child
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    shown = out.decode().replace("\r\n", "\n")
    assert os.waitstatus_to_exitcode(status) == piped.returncode == 1
    assert max(len(line) for line in shown.splitlines()) <= 80
    assert max(len(line) for line in piped.stdout.splitlines()) > 200
    assert "".join(shown.split()) == "".join(piped.stdout.split())


def test_the_score_in_the_first_line_shows_its_fraction():
    """13/23 checks passed beside a score of 0.52 read as a mistake: the score counts the
    cases (the two gates, valid Python and allowed imports, are checks, not cases), and the
    first line says so with the fraction it is."""
    from attnlab.grade import report

    r = grade_file(CORPUS / "self_attention__missing_scale__no_sqrt.py")
    cases = [c for c in r.checks if c.scored]
    first = report.text(r).splitlines()[0]
    n_ok = sum(c.passed for c in r.checks)
    fraction = f"{sum(c.passed for c in cases)}/{len(cases)}"
    assert f"{n_ok}/{len(r.checks)} checks passed (score {r.score:.2f} = {fraction}," in first
    assert r.score == pytest.approx(sum(c.passed for c in cases) / len(cases), abs=1e-4)
    assert len(cases) == len(r.checks) - 2
