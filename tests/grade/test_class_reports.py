"""Class mode: student subfolders, a gradebook across exercises, an HTML report in a browser."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest

from attnlab.grade import grade_dir, report
from helpers import browser_page

CORPUS = Path(__file__).parent / "submissions"
EVIL = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def klass(tmp_path_factory) -> tuple[Path, list]:
    folder = tmp_path_factory.mktemp("class")
    layout = {
        "alice/self_attention.py": "self_attention__pass__vectorized",
        "alice/mask.py": "causal_mask__pass__tril",
        "bob/self_attention.py": "self_attention__missing_scale__no_sqrt",
        "bob/mask.py": "causal_mask__mask_orientation__triu",
        f"{EVIL}/self_attention.py": "self_attention__mask_orientation__triu",
        "carol.py": "self_attention__pass__loops",  # a file at the top: its own student
    }
    for rel, source in layout.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / f"{source}.py", folder / rel)
    return folder, grade_dir(folder, seed=3, jobs=2)


def test_student_subfolders_are_found_and_each_file_graded_as_its_exercise(klass):
    _, reports = klass
    got = {(r.file, r.exercise, r.passed) for r in reports}
    assert ("alice/mask.py", "causal_mask", True) in got
    assert ("bob/self_attention.py", "self_attention", False) in got
    assert ("carol.py", "self_attention", True) in got and len(reports) == 6


def test_gradebook_has_one_row_per_student_and_one_column_per_exercise(klass):
    _, reports = klass
    rows = list(csv.DictReader(io.StringIO(report.gradebook(reports))))
    by = {r["student"]: r for r in rows}
    assert set(by) == {"alice", "bob", "carol", EVIL}
    assert list(rows[0]) == ["student", "causal_mask", "self_attention", "mean", "status",
                             "causal_mask mistakes", "self_attention mistakes", "seed",
                             "attnlab_version"]  # fmt: skip
    assert by["alice"]["self_attention"] == "1.0000" and by["alice"]["causal_mask"] == "1.0000"
    assert float(by["bob"]["self_attention"]) < 1 and by["carol"]["causal_mask"] == ""
    # who needs which hint: each student's mistake ids per exercise
    assert by["bob"]["self_attention mistakes"] == "missing_scale"
    assert by["bob"]["causal_mask mistakes"] == "mask_orientation"
    assert by["alice"]["self_attention mistakes"] == "" == by["carol"]["causal_mask mistakes"]


def test_every_format_is_written_atomically_with_o(klass, tmp_path, capsys):
    from attnlab.cli import main

    folder, _ = klass
    out = tmp_path / "reports" / "class.html"
    assert main(["grade", str(folder), "--format", "html", "-o", str(out), "--seed", "3"]) == 1
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "missing_scale" in page
    assert capsys.readouterr().out == ""  # the report went to the file only
    assert [p.name for p in out.parent.iterdir()] == ["class.html"]  # no temp file left
    one = tmp_path / "one.json"
    bad = CORPUS / "self_attention__missing_scale__no_sqrt.py"
    assert main(["grade", str(bad), "--format", "json", "--output", str(one), "--seed", "3"]) == 1
    assert '"missing_scale"' in one.read_text(encoding="utf-8")
    assert main(["grade", str(bad), "-o", str(tmp_path)]) == 2  # a folder: a usage error


def test_html_class_report_in_a_browser(klass, browser, tmp_path):
    _, reports = klass
    page_file = tmp_path / "class.html"
    page_file.write_text(report.class_html(reports), encoding="utf-8")
    errors, requests, dialogs = [], [], []
    listeners = {
        "console": lambda m: m.type == "error" and errors.append(m.text),
        "pageerror": lambda e: errors.append(str(e)),
        "request": lambda r: requests.append(r.url),
        "dialog": lambda d: (dialogs.append(d.message), d.dismiss()),
    }
    page = browser_page(browser, listeners)
    page.goto(page_file.as_uri())
    assert errors == [] and dialogs == []
    assert requests == [page_file.as_uri()]  # nothing loaded from anywhere else
    assert page.inner_text("#rate").startswith("3/6 submissions passed")
    assert page.locator("#gradebook tr").count() == 1 + 4
    assert EVIL in page.inner_text("#gradebook")  # the name shows as text, runs nothing
    assert page.locator("#gradebook img").count() == 0
    mistakes = page.inner_text("#mistakes")
    assert "mask_orientation" in mistakes and "np.tril" in mistakes  # its hint beside it
    bob = page.locator("#gradebook tr", has_text="bob").inner_text()
    assert "missing_scale" in bob and "mask_orientation" in bob  # his mistakes in his row
