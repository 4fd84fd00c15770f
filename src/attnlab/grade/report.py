"""Reports: text for learners, JSON for tools, JUnit XML for CI, CSV for a whole class."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from collections import Counter

from .grader import Report


def text(r: Report, lang: str = "en") -> str:
    ja = lang == "ja"
    n_ok = sum(c.passed for c in r.checks)
    head = (
        f"{r.exercise}: {n_ok}/{len(r.checks)} "
        + ("チェック合格" if ja else "checks passed")
        + f" (score {r.score:.2f}, seed {r.seed})"
    )
    lines = [(f"{r.file}  " if r.file else "") + head]
    shown: set[str] = set()
    for c in r.checks:
        mark = "PASS" if c.passed else "FAIL"
        first, *rest = (c.message or "").splitlines() or [""]
        lines.append(f"  {mark}  {c.name}" + (f": {first}" if first else ""))
        if rest and c.message not in shown:  # a traceback: print it once, not for every case
            lines += [f"        {ln}" for ln in rest[-8:]]
            shown.add(c.message)
    if r.mistakes:
        lines.append("ミス：" if ja else "mistakes:")
        lines += [f"  {m}: {r.hints.get(m, '')}" for m in r.mistakes]
    lines.append(("合格" if ja else "PASSED") if r.passed else ("不合格" if ja else "FAILED"))
    return "\n".join(lines)


def to_json(r: Report) -> str:
    return json.dumps(r.to_dict(), indent=2, ensure_ascii=False)


def junit(reports: list[Report]) -> str:
    suites = ET.Element("testsuites")
    for r in reports:
        failures = sum(not c.passed for c in r.checks)
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=f"attnlab.{r.exercise}" + (f" {r.file}" if r.file else ""),
            tests=str(len(r.checks)),
            failures=str(failures),
        )
        for c in r.checks:
            case = ET.SubElement(suite, "testcase", classname=r.exercise, name=c.name)
            if not c.passed:
                fail = ET.SubElement(
                    case, "failure", message=(c.message or "failed").splitlines()[0]
                )
                fail.text = c.message + (
                    "\nmistakes: " + ", ".join(r.mistakes) if r.mistakes else ""
                )
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)


def class_csv(reports: list[Report]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["file", "exercise", "passed", "score", "mistakes"])
    for r in reports:
        w.writerow([r.file, r.exercise, int(r.passed), f"{r.score:.4f}", ";".join(r.mistakes)])
    return buf.getvalue()


def class_summary(reports: list[Report]) -> str:
    n = len(reports)
    passed = sum(r.passed for r in reports)
    common = Counter(m for r in reports for m in r.mistakes).most_common(5)
    lines = [f"{passed}/{n} submissions passed ({passed / n:.0%})" if n else "no submissions"]
    if common:
        lines.append("most common mistakes: " + ", ".join(f"{m} ({k})" for m, k in common))
    return "\n".join(lines)
