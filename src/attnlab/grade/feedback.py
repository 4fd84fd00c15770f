"""One feedback file per student (``attnlab grade DIR --feedback OUT``), in the learner's language:
each graded file's full report (checks, the smallest failing case, mistakes with their hints and
lines), their mean over the assigned exercises, the files of theirs not graded, and the seed and
attnlab version that repeat the grading. A student who handed in nothing gets a file too."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ..files import atomic_write_text
from ..i18n import Text
from .report import ClassInfo, _points, gradebook_rows, provenance
from .results import Report, student_of
from .view import clean, safe, shown_name, text

WORDS = {
    "title": Text("Feedback for", "フィードバック：", "反馈："),
    "mean": Text("Mean over the assigned exercises", "課題全体の平均", "所有布置练习的平均分"),
    "nothing": Text(
        "Nothing was handed in for this exercise.",
        "この課題の提出はありませんでした。",
        "这个练习没有提交。",
    ),
    "ignored": Text("Files not graded", "採点しなかったファイル", "未评分的文件"),
    "graded": Text("Graded with", "採点条件", "评分条件"),
}
UNSAFE = re.compile(r"[^\w.\-]+")


def file_name(student: str) -> str:
    """A file name for ``student`` that stays inside the folder (no separators, no dot-only
    names), readable where the name is plain."""
    name = UNSAFE.sub("_", shown_name(student)).strip("._") or "student"
    return f"{name}.txt"


def student_text(student: str, row: dict[str, Report], exercises: list[str], others: list[Report],
                 ignored: list[str], lang: str, graded: str) -> str:  # fmt: skip
    """One student's feedback: every report of theirs (the best attempt first per exercise)."""
    w = {k: t(lang) for k, t in WORDS.items()}
    lines = [f"{w['title']} {shown_name(student)}", ""]
    for ex in exercises:
        if ex not in row:
            lines += [f"{ex}: {w['nothing']}", ""]
            continue
        lines += [text(row[ex], lang), ""]
        lines += [text(r, lang) + "\n" for r in others if r.exercise == ex and r is not row[ex]]
    mean = sum(_points(row[e]) for e in exercises if e in row) / max(1, len(exercises))
    lines.append(f"{w['mean']}: {mean:.2f}")
    if ignored:
        lines.append(f"{w['ignored']}: " + "; ".join(shown_name(clean(x)) for x in ignored))
    lines.append(f"{w['graded']}: {graded}")
    return "\n".join(lines) + "\n"


def _in(r: Report, lang: str) -> Report:
    """``r`` with its hints in ``lang`` (a class graded in one language, its feedback asked for
    in another: each hint at level 3, how to fix it)."""
    if r.lang == lang or not r.mistakes:
        return r
    from .exercises import EXERCISES

    ex = EXERCISES.get(r.exercise)
    if ex is None:
        return r
    return replace(r, hints={m: ex.hint(m, lang) for m in r.mistakes}, lang=lang)


def write_feedback(
    folder: str | Path, reports: list[Report], klass: ClassInfo | None = None, lang: str = "en"
) -> list[Path]:
    """Write ``folder``/<student>.txt for every student of the class (roster names too);
    returns the files written. Every text from a submission is made safe as in every format."""
    folder = Path(folder)
    reports = [safe(_in(r, lang)) for r in reports]
    exercises, book = gradebook_rows(reports, klass)
    seeds, versions = provenance(reports)
    graded = f"seed {seeds or '-'}, attnlab {versions or '-'}"
    written: list[Path] = []
    for student, row in book.items():
        mine = [r for r in reports if shown_name(student_of(r.file)) == student]
        ignored = [x for x in (klass.ignored if klass else []) if x.split("/", 1)[0] == student]
        body = student_text(student, row, exercises, mine, ignored, lang, graded)
        name, k = file_name(student), 1
        while folder / name in written:  # two names made alike ("a b", "a_b"): both kept
            k += 1
            name = file_name(student).removesuffix(".txt") + f"-{k}.txt"
        written.append(atomic_write_text(folder / name, body))
    return written
