"""A report as a person reads it: terminal text and the HTML fragment notebooks show.

Everything in a report that came from a submission (messages, tracebacks, printed output, file
names) is untrusted: terminal escapes and control characters are dropped, HTML is escaped.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from .words import check_name, word

if TYPE_CHECKING:
    from .results import Report

ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # keeps \t and \n


def clean(s: str | None) -> str:
    """Text safe for a terminal: escape sequences and control characters removed."""
    return CONTROL.sub("", ANSI.sub("", s or ""))


def text(r: Report, lang: str | None = None) -> str:
    """The report as terminal text in ``lang`` (default: the language it was graded in)."""
    lang = lang or r.lang
    name = f"{clean(r.file)}  " if r.file else ""
    if r.error:
        return f"{name}{r.exercise}: {word('grader_error', lang)}: {clean(r.error)}"
    n_ok = sum(c.passed for c in r.checks)
    head = (
        f"{r.exercise}: {n_ok}/{len(r.checks)} {word('checks_passed', lang)}"
        f" ({word('score', lang)} {r.score:.2f}, {word('seed', lang)} {r.seed})"
    )
    lines = [name + head, _isolation_line(r.isolation, lang)]
    shown: set[str] = set()
    for c in r.checks:
        mark = word("pass" if c.passed else "fail", lang)
        first, *rest = clean(c.message).splitlines() or [""]
        lines.append(f"  {mark}  {check_name(c.name, lang)}" + (f": {first}" if first else ""))
        if rest and c.message not in shown:  # a traceback: print it once, not for every case
            lines += [f"        {ln}" for ln in rest[-8:]]
            shown.add(c.message)
    if r.shown:
        lines += side_by_side(r.shown, lang)
    if r.output:
        lines.append(word("printed", lang))
        lines += [f"  | {ln}" for ln in clean(r.output).splitlines()[:40]]
    if r.mistakes:
        lines.append(word("mistakes", lang))
        for m in r.mistakes:
            lines.append(f"  {m}: {r.hints.get(m, '')}")
            lines += _where(r, m, lang)
    lines.append(word("passed" if r.passed else "failed", lang))
    return "\n".join(ln for ln in lines if ln)


def _where(r: Report, mistake: str, lang: str) -> list[str]:
    """The line a mistake's values first go wrong on, quoted from the graded code."""
    code = r.source.splitlines()
    found = []
    for n in r.lines.get(mistake, []):
        quoted = clean(code[n - 1].strip()) if 0 < n <= len(code) else ""
        found += [f"      {word('line_here', lang, n=n)}", f"        {quoted}"]
    return found


def _cells(a) -> list[list]:
    return [a] if a and not isinstance(a[0], list) else a  # a 1-D vector as one row


def _fmt(x) -> str:
    if x is None:
        return "nan"
    if isinstance(x, bool) or (x in (0, 1) and float(x).is_integer()):
        return f"{x:.0f}"
    return f"{x:.2f}"


def side_by_side(shown: dict, lang: str = "en") -> list[str]:
    """The learner's array beside the expected one, wrong cells marked with ``*``."""
    got, want = _cells(shown["got"]), _cells(shown["expected"])
    case = check_name(shown["case"], lang)
    title = word("yours", lang, name=shown["name"], case=case if lang != "en" else repr(case))
    lines = ["  " + clean(title)]
    for g_row, w_row in zip(got, want, strict=True):
        left = " ".join(
            _fmt(g).rjust(5) + ("*" if _wrong(g, w) else " ")
            for g, w in zip(g_row, w_row, strict=True)
        )
        right = " ".join(_fmt(w).rjust(5) + " " for w in w_row)
        lines.append(f"    {left} | {right}")
    return lines


def _wrong(g, w) -> bool:
    if g is None or w is None:
        return (g is None) != (w is None)
    return abs(g - w) > 1e-6 + 1e-4 * abs(w)


def _isolation_line(isolation: str, lang: str) -> str:
    return f"  {word(isolation, lang)}" if isolation in ("bwrap", "process", "in-process") else ""


def report_html(r: Report) -> str:
    """One submission's report as an HTML fragment (for notebooks); every text escaped."""
    e, lang = html.escape, r.lang
    verdict = word("passed" if r.passed else "failed", lang)
    color = "#176c2c" if r.passed else "#a11"
    failed = "".join(
        f"<li><b>{e(check_name(c.name, lang))}</b>: "
        f"{e(clean(c.message).splitlines()[0] if c.message else '')}</li>"
        for c in r.checks
        if not c.passed
    )
    hints = "".join(f"<li><code>{e(m)}</code>: {e(r.hints.get(m, ''))}</li>" for m in r.mistakes)
    return (
        f"<div><p><b style='color:{color}'>{e(r.exercise)}: {e(verdict)}</b> "
        f"({e(word('score', lang))} {r.score:.2f}, {e(word('seed', lang))} {r.seed})</p>"
        + (f"<ul>{failed}</ul>" if failed else "")
        + (f"<p>{e(word('mistakes', lang))}</p><ul>{hints}</ul>" if hints else "")
        + "</div>"
    )
