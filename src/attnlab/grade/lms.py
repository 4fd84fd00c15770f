"""What a learning management system takes: a grade-import CSV for Canvas and Moodle, and a
regrade merged into a gradebook already written.

The LMS CSV is the columns the two share: Canvas's gradebook import reads ``Student``, ``ID``,
``SIS User ID``, ``Section`` and then one column per assignment; Moodle's CSV grade import maps
any column to its user identifier and any other to a grade item. attnlab writes the student's
id (their folder's name, as in the roster) in ``Student`` and ``SIS User ID``, leaves ``ID`` and
``Section`` empty (the LMS's own numbers, which attnlab does not know), and the assignment
column holds the gradebook's mean as points out of 100.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..errors import UserError
from .report import ClassInfo, _csv, _points, gradebook, gradebook_rows, provenance
from .results import Report, student_of
from .view import safe, shown_name

LMS_HEADER = ["Student", "ID", "SIS User ID", "Section"]


def lms_csv(reports: list[Report], klass: ClassInfo | None = None, column: str = "attnlab") -> str:
    """One row per student (a roster name that handed in nothing scores 0): their mean over
    the assigned exercises, out of 100, under the assignment ``column``."""
    reports = [safe(r) for r in reports]
    exercises, book = gradebook_rows(reports, klass)
    rows = []
    for student, row in book.items():
        mean = sum(_points(row[e]) for e in exercises if e in row) / max(1, len(exercises))
        name = shown_name(student)
        rows.append([name, "", name, "", f"{100 * mean:.2f}"])
    return _csv([*LMS_HEADER, f"{column} (100)"], rows)


def _read(path: Path) -> list[list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"--merge {path}: cannot read it ({e}); expected a gradebook CSV") from None
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as e:
        raise UserError(f"--merge {path}: not a CSV ({e}); expected a gradebook CSV") from None
    if not rows:
        raise UserError(f"--merge {path}: empty; expected a gradebook CSV with its header")
    return rows


def gradebook_header(exercises: list[str]) -> list[str]:
    """The columns of a gradebook over ``exercises`` (``report.gradebook``'s)."""
    return list(next(csv.reader(io.StringIO(gradebook([], ClassInfo([], exercises))))))


def check_mergeable(path: str | Path, exercises: list[str] | None) -> None:
    """Refuse, before any grading, a file that is not a gradebook of these ``exercises`` (any
    gradebook when they are not given: its columns are known only once graded)."""
    path = Path(path)
    header = _read(path)[0]
    if exercises:
        want = gradebook_header(exercises)
        if header != want:
            raise UserError(
                f"--merge {path}: its columns are {', '.join(header)}; this grading's are "
                f"{', '.join(want)} (grade with the same --exercises as that gradebook)"
            )
    elif header[:1] != ["student"] or header[-2:] != ["seed", "attnlab_version"]:
        raise UserError(
            f"--merge {path}: its columns are {', '.join(header)}; expected an attnlab "
            "gradebook (student, the exercises, mean, status, ..., seed, attnlab_version)"
        )


def merge_gradebook(
    path: str | Path, reports: list[Report], klass: ClassInfo | None = None
) -> tuple[str, list[str]]:
    """The gradebook at ``path`` with the rows of the students graded now replaced (added at
    the end when new), every other row as it was (a roster name or an empty folder of the
    regrade replaces nothing); each row keeps its own seed and version.
    Returns (the CSV, the students replaced or added). A gradebook with other columns (other
    exercises assigned, another attnlab's layout) is refused: one line, nothing written."""
    path = Path(path)
    old = _read(path)
    fresh = list(csv.reader(io.StringIO(gradebook(reports, klass))))
    header, new_rows = fresh[0], fresh[1:]
    if old[0] != header:
        raise UserError(
            f"--merge {path}: its columns are {', '.join(old[0])}; this grading's are "
            f"{', '.join(header)} (grade with the same --exercises as that gradebook)"
        )
    graded = {shown_name(student_of(r.file)) for r in reports}  # not roster or empty rows
    new_rows = [r for r in new_rows if r[0] in graded]
    by_student = {r[0]: r for r in new_rows}
    merged = [by_student.pop(r[0], r) for r in old[1:]]
    merged += list(by_student.values())
    done = [r[0] for r in new_rows]
    return _csv(header, merged), done  # neutralised again: a hand-edited cell too


def merge_note(done: list[str], reports: list[Report]) -> str:
    """What the merge changed, with the seed and version of the regrade."""
    seeds, versions = provenance(reports)
    return f"merged {len(done)} row(s): {', '.join(done)} (seed {seeds}, attnlab {versions})"
