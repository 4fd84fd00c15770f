"""Reports: text for learners, JSON for tools, JUnit XML for CI, CSV for a whole class.

Everything in a report that came from a submission (messages, tracebacks, printed output, file
names) is untrusted. Every format starts from ``view.safe`` (escapes, controls, bidi marks and
lone surrogates dropped; file names escaped onto one line; messages capped, saying what was cut);
JUnit XML also drops the characters XML 1.0 cannot hold, so it always parses; every CSV field is
quoted, and a formula start (``= + - @``, tab, CR) at the field's start or after any character a
spreadsheet may split on (``; , |``, tab, newline) gets an apostrophe (OWASP's advice on CSV
injection), so no formula survives whichever separator the CSV is read with.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field

from .mistakes import MISTAKES
from .results import CheckResult, Report, student_of
from .view import clean, has_points, safe, shown_name, text
from .words import word

NOT_XML = re.compile(r"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
FORMULA = re.compile(r"(?<![^;,|\t\n\r])(?=[=+\-@\t\r])")  # at the start or after a separator


def _xml(s: str | None) -> str:
    return NOT_XML.sub("\ufffd", clean(s))


def _cell(value: object) -> str:
    """A CSV field no spreadsheet reads as a formula, under any separator."""
    return FORMULA.sub("'", clean(str(value)))


@dataclass
class ClassInfo:
    """What a class report needs beyond the reports: every student (an empty folder, a roster
    name), the assigned exercises (the gradebook's columns and its mean), the files ignored."""

    students: list[str] = field(default_factory=list)
    exercises: list[str] | None = None
    ignored: list[str] = field(default_factory=list)
    roster: list[str] | None = None


def provenance(reports: list[Report]) -> tuple[str, str]:
    """(seeds, attnlab versions) of ``reports``, each the distinct values joined by ``;``: what
    a grading needs to be repeated exactly (one seed and one version for a class graded at once)."""
    seeds = dict.fromkeys(str(r.seed) for r in reports if r.seed is not None)
    versions = dict.fromkeys(r.version for r in reports)
    return ";".join(seeds), ";".join(versions)


def to_json(r: Report) -> str:
    return json.dumps(safe(r).to_dict(), indent=2, ensure_ascii=False)


def junit(reports: list[Report]) -> str:
    reports = [safe(r) for r in reports]
    suites = ET.Element("testsuites")
    for r in reports:
        checks = r.checks if not r.error else []
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=_xml(f"attnlab.{r.exercise}" + (f" {r.file}" if r.file else "")),
            tests=str(len(checks) or 1),
            failures=str(sum(not c.passed for c in checks)),
            errors=str(int(bool(r.error))),
        )
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="seed", value=str(r.seed))
        ET.SubElement(props, "property", name="attnlab_version", value=_xml(r.version))
        weighted = has_points(r)  # a teacher's points: the earned and each check's
        if weighted:
            value = f"{r.points:g}/{r.max_points:g}"
            ET.SubElement(props, "property", name="points", value=value)
        if r.error:
            case = ET.SubElement(suite, "testcase", classname=r.exercise, name="grader")
            ET.SubElement(case, "error", message=_xml(r.error)).text = _xml(r.error)
        for c in checks:
            case = ET.SubElement(suite, "testcase", classname=r.exercise, name=_xml(c.name))
            if weighted and c.scored:
                ET.SubElement(ET.SubElement(case, "properties"), "property", name="points",
                              value=f"{c.points:g}")  # fmt: skip
            if not c.passed:
                first = (c.message or "failed").splitlines()[0]
                fail = ET.SubElement(case, "failure", message=_xml(first))
                mistakes = "\nmistakes: " + ", ".join(r.mistakes) if r.mistakes else ""
                fail.text = _xml(c.message + mistakes)
        if r.output:
            ET.SubElement(suite, "system-out").text = _xml(r.output)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)


def _csv(header: list[str], rows: list[list]) -> str:
    """CSV text with every cell neutralised for spreadsheets (``_cell``)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for row in [header, *rows]:
        w.writerow([_cell(v) for v in row])
    return buf.getvalue()


def class_csv(reports: list[Report]) -> str:
    header = ["file", "exercise", "passed", "score", "mistakes", "isolation", "error", "seed"]
    header += ["attnlab_version", "points", "max_points"]
    reports = [safe(r) for r in reports]
    rows = [
        [
            r.file,
            r.exercise,
            "" if r.error else int(r.passed),
            f"{r.score:.4f}",
            ";".join(r.mistakes),
            r.isolation,
            r.error or "",
            "" if r.seed is None else r.seed,
            r.version,
            f"{r.points:g}",
            f"{r.max_points:g}",
        ]
        for r in reports
    ]
    return _csv(header, rows)


def class_summary(reports: list[Report], lang: str = "en", klass: ClassInfo | None = None) -> str:
    n = len(reports)
    passed = sum(r.passed for r in reports)
    common = Counter(m for r in reports for m in r.mistakes).most_common(5)
    lines = [word("rate", lang, passed=passed, n=n, share=passed / n) if n else word("none", lang)]
    if common:
        lines.append(word("common", lang) + ", ".join(f"{m} ({k})" for m, k in common))
    errors = sum(bool(r.error) for r in reports)
    if errors:
        lines.append(word("not_graded", lang, k=errors))
    if klass and klass.ignored:
        lines.append(ignored_line(klass.ignored))
    return "\n".join(lines)


def ignored_line(ignored: list[str]) -> str:
    """The files not graded, on one line (names escaped: a file name cannot forge a line)."""
    return f"ignored {len(ignored)}: " + "; ".join(shown_name(clean(x)) for x in ignored)


def gradescope(r: Report, lang: str = "en") -> dict:
    """Gradescope's results.json for one submission: 100 points shared by the scored checks in
    proportion to their points (equal shares unless a teacher's exercise sets points), one test
    each (name, score, max_score, status, output, visibility), the mistakes and their hints in
    the top-level output."""
    r = safe(r)
    scored = [c for c in r.checks if c.scored]
    if r.error or not scored:  # the code never ran (syntax, imports) or the grader broke
        why = r.error or "; ".join(clean(c.message) for c in r.checks if not c.passed)
        scored = [CheckResult("submission runs", False, why)]
    total = sum(c.points for c in scored)
    share = {id(c): 100.0 * c.points / total if total else 100.0 / len(scored) for c in scored}
    tests = [
        {
            "name": c.name,
            "score": share[id(c)] if c.passed else 0.0,
            "max_score": share[id(c)],
            "status": "passed" if c.passed else "failed",
            "output": clean(c.message),
            "visibility": "visible",
        }
        for c in scored
    ]
    verdict = "PASSED" if r.passed else "FAILED"
    lines = [f"{r.exercise}: {verdict} (seed {r.seed}, attnlab {r.version})"]
    if r.error:  # not graded at all (a refusal, or the grader broke): say that, not FAILED
        lines = [f"{r.exercise}: NOT GRADED (attnlab {r.version}): {r.error}"]
    lines += [f"{m}: {r.hints.get(m, '')}" for m in r.mistakes]
    lines += [clean(n) for n in r.notes]
    if r.output:
        lines += ["", "printed output:", clean(r.output)]
    return {
        "score": round(sum(t["score"] for t in tests), 4),
        "output": "\n".join(lines),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "mistakes": r.mistakes,
            "isolation": r.isolation,
            "seed": r.seed,
            "attnlab_version": r.version,
            "points": r.points,
            "max_points": r.max_points,
        },
    }


def best_attempts(reports: list[Report]) -> dict[str, dict[str, Report]]:
    """{student: {exercise: the report of their best attempt}}: the highest score (a report
    the grader could not make counts 0), the first file in name order on a tie."""
    best: dict[str, dict[str, Report]] = {}
    for r in sorted(reports, key=lambda r: r.file):
        row = best.setdefault(student_of(r.file), {})
        old = row.get(r.exercise)
        if old is None or _points(r) > _points(old):
            row[r.exercise] = r
    return best


def _points(r: Report) -> float:
    return 0.0 if r.error else r.score


def gradebook_rows(
    reports: list[Report], klass: ClassInfo | None = None
) -> tuple[list[str], dict[str, dict[str, Report]]]:
    """(the exercises, {student: {exercise: best attempt}}) for a class: the exercises are the
    assigned ones when given, else every exercise handed in (catalogue order); every student of
    ``klass`` (an empty folder, a roster name) has a row, empty if they handed in nothing."""
    from .exercises import EXERCISES

    book = best_attempts(reports)
    for student in klass.students if klass else []:
        book.setdefault(shown_name(student), {})  # escaped as report files are
    if klass and klass.exercises:
        order = list(klass.exercises)
    else:
        present = {e for row in book.values() for e in row}
        order = [e for e in EXERCISES if e in present] + sorted(present - set(EXERCISES))
    return order, dict(sorted(book.items()))


def _status(student: str, row: dict, klass: ClassInfo | None) -> str:
    if not row:
        return "missing"  # handed in nothing (an empty folder, or only on the roster)
    if klass and klass.roster and student not in {shown_name(x) for x in klass.roster}:
        return "not on roster"
    return ""


def gradebook(reports: list[Report], klass: ClassInfo | None = None) -> str:
    """CSV: one row per student, one column per exercise (the best attempt's score), the mean
    over those exercises (one not handed in counts 0), whether the student handed in nothing
    (``missing``), then per exercise the best attempt's mistake ids (``;``-separated), so a
    teacher sees who needs which hint; the seed and attnlab's version last."""
    reports = [safe(r) for r in reports]
    exercises, book = gradebook_rows(reports, klass)
    seeds, versions = provenance(reports)
    rows = []
    for student, row in book.items():
        cells = [f"{_points(row[e]):.4f}" if e in row else "" for e in exercises]
        mean = sum(_points(row[e]) for e in exercises if e in row) / max(1, len(exercises))
        ids = [";".join(row[e].mistakes) if e in row else "" for e in exercises]
        status = _status(student, row, klass)
        rows.append([shown_name(student), *cells, f"{mean:.4f}", status, *ids, seeds, versions])
    header = ["student", *exercises, "mean", "status", *(f"{e} mistakes" for e in exercises)]
    header += ["seed", "attnlab_version"]
    return _csv(header, rows)


CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}
th{background:#f3f3f3}.bar{background:#4a78c2;height:1em;display:inline-block}
.ok{color:#176c2c}.no{color:#a11}td.n{text-align:right;font-variant-numeric:tabular-nums}"""


def class_html(reports: list[Report], lang: str = "en", klass: ClassInfo | None = None) -> str:
    """A one-file class report for a browser: pass rate, score distribution, mistakes by
    frequency with their hints, and the gradebook. No script, no external resource; every text
    from a submission is escaped."""
    e = html.escape
    reports = [safe(r) for r in reports]
    n = len(reports)
    passed = sum(r.passed for r in reports)
    buckets = [0] * 5
    for r in reports:
        buckets[min(4, int(r.score * 5))] += 1
    dist = "".join(
        f"<tr><td>{i * 20}-{i * 20 + 20}%</td><td class=n>{k}</td>"
        f"<td><span class=bar style='width:{12 * k}px'></span></td></tr>"
        for i, k in enumerate(buckets)
    )
    common = Counter(m for r in reports for m in r.mistakes).most_common()
    own = {m: h for r in reports for m, h in r.hints.items()}  # a teacher's mistakes' hints

    def fix(m: str) -> str:
        return MISTAKES[m].fix(lang) if m in MISTAKES else own.get(m, "")

    mistakes = "".join(
        f"<tr><td><code>{e(m)}</code></td><td class=n>{k}</td><td>{e(fix(m))}</td></tr>"
        for m, k in common
    )
    exercises, book = gradebook_rows(reports, klass)
    head = "".join(f"<th>{e(x)}</th>" for x in exercises)

    def cell(row: dict, x: str) -> str:
        if x not in row:
            return "<td></td>"
        names = "".join(f"<br><code>{e(m)}</code>" for m in row[x].mistakes)
        return f"<td class=n>{_points(row[x]):.2f}{names}</td>"

    def who(student: str, row: dict) -> str:
        status = _status(student, row, klass)
        return e(shown_name(student)) + (f" <i>({e(status)})</i>" if status else "")

    rows = "".join(
        f"<tr><td>{who(student, row)}</td>" + "".join(cell(row, x) for x in exercises) + "</tr>"
        for student, row in book.items()
    )
    ignored = (
        f"<p id=ignored>{e(ignored_line(klass.ignored))}</p>" if klass and klass.ignored else ""
    )
    rate = word("rate", lang, passed=passed, n=n, share=passed / n) if n else word("none", lang)
    seeds, versions = provenance(reports)
    graded = f"{word('seed', lang)} {seeds or '-'}, attnlab {versions or '-'}"
    w = {k: e(word(k, lang)) for k in HTML_WORDS}
    return f"""<!doctype html>
<html lang="{e(lang)}"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>attnlab: {w["class_report"]}</title><style>{CSS}</style></head><body>
<h1>{w["class_report"]}</h1>
<p id="rate">{e(rate)}</p>
<p id="provenance">{e(graded)}</p>{ignored}
<h2>{w["scores"]}</h2><table id="distribution"><tr><th>{w["score"]}</th><th>{w["submissions"]}</th><th></th></tr>{dist}</table>
<h2>{w["by_frequency"]}</h2>
<table id="mistakes"><tr><th>{w["mistake"]}</th><th>{w["submissions"]}</th><th>{w["hint"]}</th></tr>{mistakes}</table>
<h2>{w["gradebook"]}</h2>
<table id="gradebook"><tr><th>{w["student"]}</th>{head}</tr>{rows}</table>
</body></html>
"""


HTML_WORDS = (
    "class_report", "scores", "score", "submissions", "by_frequency", "mistake", "hint",
    "gradebook", "student",
)  # fmt: skip


def render(
    reports: list[Report],
    fmt: str,
    lang: str = "en",
    single: bool = True,
    klass: ClassInfo | None = None,
) -> str:
    """All reports in one format, ending in a newline (JSON: one object for a single file);
    ``klass`` gives the gradebook and HTML their students, exercises and ignored files."""
    if fmt == "gradescope":
        return json.dumps(gradescope(reports[0], lang), indent=2, ensure_ascii=False) + "\n"
    if fmt == "json":
        body = (
            to_json(reports[0])
            if single
            else json.dumps([safe(r).to_dict() for r in reports], indent=2, ensure_ascii=False)
        )
    elif fmt == "junit":
        body = junit(reports)
    elif fmt == "csv":
        return class_csv(reports)
    elif fmt == "gradebook":
        return gradebook(reports, klass)
    elif fmt == "html":
        return class_html(reports, lang, klass)
    else:
        body = "\n\n".join(text(r, lang) for r in reports)
    return body + "\n"
