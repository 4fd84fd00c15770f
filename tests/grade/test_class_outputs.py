"""What a teacher takes away from a class grading: the LMS CSV, one feedback file per student,
a regrade merged into a gradebook, and the pairs of alike files."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from attnlab.cli import main
from attnlab.grade import grade_class, report
from attnlab.grade.feedback import write_feedback
from attnlab.grade.lms import lms_csv
from attnlab.grade.similarity import ratio, similar_pairs, tokens

CORPUS = Path(__file__).parent / "submissions"
RIGHT = (CORPUS / "self_attention__pass__vectorized.py").read_text()
# ben's copy of ann's file: other names, comments and a docstring, the same program
COPY = '"""All my own work."""\n# self-attention, written from scratch\n' + (
    RIGHT.replace("Q, K, V", "qq, kk, vv").replace("Q @ K.T", "qq @ kk.T")
    .replace("K.shape", "kk.shape").replace("w @ V", "w @ vv").replace("scores", "s")
    .replace("import numpy as np", "import numpy as numpy_")
    .replace("np.", "numpy_.")
)  # fmt: skip
LAYOUT = {
    "ann/self_attention.py": RIGHT,
    "ben/self_attention.py": COPY,
    "cat/self_attention.py": (CORPUS / "self_attention__mask_orientation__triu.py").read_text(),
    "dan/self_attention.py": (CORPUS / "self_attention__pass__loops.py").read_text(),
    "=cmd|x/self_attention.py": RIGHT,  # a folder name a spreadsheet would run
}
ROSTER = ["ann", "ben", "cat", "dan", "=cmd|x", "eve"]  # eve handed in nothing


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    for rel, text in LAYOUT.items():
        (folder / rel).parent.mkdir(parents=True)
        (folder / rel).write_text(text)
    done = grade_class(folder, ["self_attention"], isolation="process", allow_unsandboxed=True)
    students = sorted(set(done.students) | set(ROSTER))
    klass = report.ClassInfo(students, ["self_attention"], done.ignored, ROSTER)
    return folder, done.reports, klass


def test_the_lms_csv_has_canvas_columns_and_the_mean_out_of_100(graded):
    _, reports, klass = graded
    rows = list(csv.reader(io.StringIO(lms_csv(reports, klass, "HW 3"))))
    assert rows[0] == ["Student", "ID", "SIS User ID", "Section", "HW 3 (100)"]
    by = {r[0]: r for r in rows[1:]}
    cat = next(r for r in reports if r.file.startswith("cat/"))
    assert by["cat"] == ["cat", "", "cat", "", f"{100 * cat.score:.2f}"] and cat.score < 1
    assert by["ann"][4] == by["dan"][4] == "100.00" and by["eve"][4] == "0.00"
    assert by["'=cmd|x"][2] == "'=cmd|x"  # no formula survives


def test_one_feedback_file_per_student_in_the_learners_language(graded, tmp_path):
    _, reports, klass = graded
    written = write_feedback(tmp_path / "fb", reports, klass, "ja")
    assert sorted(p.name for p in written) == [
        "ann.txt", "ben.txt", "cat.txt", "cmd_x.txt", "dan.txt", "eve.txt"
    ]  # fmt: skip
    assert all(p.parent == tmp_path / "fb" for p in written)
    cat = (tmp_path / "fb" / "cat.txt").read_text()
    assert cat.startswith("フィードバック： cat\n") and "mask_orientation" in cat
    from attnlab.grade.mistakes import hint

    assert hint("mask_orientation", "ja") in cat  # the hint, in Japanese
    assert (
        "self_attention: この課題の提出はありませんでした。"
        in (tmp_path / "fb" / "eve.txt").read_text()
    )
    assert "seed 0, attnlab" in (tmp_path / "fb" / "ann.txt").read_text()


def test_a_regrade_replaces_one_row_and_leaves_the_others(graded, tmp_path):
    _, reports, klass = graded
    book = tmp_path / "book.csv"
    book.write_text(report.gradebook(reports, klass))
    before = book.read_text().splitlines()
    regrade = tmp_path / "regrade"
    (regrade / "cat").mkdir(parents=True)
    (regrade / "cat" / "self_attention.py").write_text(RIGHT)  # cat's fixed file
    (regrade / "zoe").mkdir()  # an empty folder in the regrade: replaces nothing
    out = tmp_path / "merged.csv"
    argv = ["grade", str(regrade), "--exercises", "self_attention", "--format", "gradebook",
            "--merge", str(book), "--seed", "5", "--no-sandbox", "-o", str(out)]  # fmt: skip
    assert main(argv) == 0
    after = out.read_text().splitlines()
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert len(changed) == 1 and changed[0][1].startswith('"cat","1.0000","1.0000"')
    assert changed[0][1].endswith('"5","' + reports[0].version + '"')  # the regrade's seed
    assert changed[0][0].startswith('"cat","0.') and "mask_orientation" in changed[0][0]


def test_merging_into_a_gradebook_with_other_columns_is_refused(graded, tmp_path, capsys):
    folder, _, _ = graded
    book = tmp_path / "other.csv"
    book.write_text('"student","causal_mask","mean"\n"ann","1.0000","1.0000"\n')
    out = tmp_path / "merged.csv"
    argv = ["grade", str(folder), "--exercises", "self_attention", "--format", "gradebook",
            "--merge", str(book), "--no-sandbox", "-o", str(out)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()  # refused before grading: no summary either
    assert len(err) == 1 and "its columns are student, causal_mask, mean" in err[0]
    assert not out.exists()
    assert main(["grade", str(folder), "--merge", str(book)]) == 2  # not a gradebook


def test_similarity_finds_the_renamed_copy_and_not_the_independent_file(graded, capsys):
    folder, reports, _ = graded
    assert tokens(RIGHT) == tokens(COPY)  # names, comments, docstrings: all normalised away
    pairs = {(p.a, p.b): p.ratio for p in similar_pairs(reports, 0.9)}
    assert pairs[("ann/self_attention.py", "ben/self_attention.py")] == 1.0
    assert not any("dan/" in a + b for a, b in pairs)  # loops: written independently
    loops = tokens(LAYOUT["dan/self_attention.py"])
    assert ratio(tokens(RIGHT), loops) < 0.5  # the README's 0.254
    argv = ["grade", str(folder), "--exercises", "self_attention", "--format", "lms",
            "--no-sandbox", "--similarity", "0.9"]  # fmt: skip
    main(argv)
    err = capsys.readouterr().err
    assert "1.000  self_attention: ann/self_attention.py ~ ben/self_attention.py" in err
