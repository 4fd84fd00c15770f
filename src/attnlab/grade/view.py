"""A report as a person reads it: terminal text and the HTML fragment notebooks show.

Everything in a report that came from a submission (messages, tracebacks, printed output, file
and folder names) is untrusted. ``safe`` is what every format starts from: terminal escapes
(CSI, OSC), C0/C1 controls, bidi controls (Trojan Source) and lone surrogates dropped from text;
file names with newlines, controls or bytes that are not UTF-8 shown escaped (``\\n``,
``\\x1b``, ``\\xff``); each message cut to ``MESSAGE_MAX`` characters and all of them to
``MESSAGES_MAX``, saying what was cut. HTML is escaped on top of that.
"""

from __future__ import annotations

import html
import re
import shutil
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from ..tables import fit
from .words import check_message, check_name, word

if TYPE_CHECKING:
    from .results import Report

ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{BIDI}]")  # keeps \t, \n
SURROGATE = re.compile("[\ud800-\udfff]")
NAME_ESCAPE = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{BIDI}\ud800-\udfff]")
MESSAGE_MAX = 2000  # characters of one check's message kept
MESSAGES_MAX = 40_000  # characters of all of a report's messages kept
OUTPUT_MAX = 4000  # characters of printed output kept (the grader keeps fewer)


def clean(s: str | None) -> str:
    """Text safe for a terminal and any viewer: escape sequences, control characters, bidi
    controls and lone surrogates removed (newlines and tabs kept)."""
    return CONTROL.sub("", SURROGATE.sub("\ufffd", ANSI.sub("", s or "")))


def _escape_char(m: re.Match) -> str:
    o = ord(m.group())
    if 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{o - 0xDC00:02x}"
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(m.group()) or (
        f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"
    )


def shown_name(name: str | None) -> str:
    """A file or folder name on one line, every control, bidi mark and non-UTF-8 byte escaped
    (so ``a\\nPASSED`` cannot forge a line of a report; applying it twice changes nothing)."""
    return NAME_ESCAPE.sub(_escape_char, name or "")


def cut(s: str, most: int) -> str:
    """``s`` with its middle cut, saying how many characters were cut: at most ``most``
    characters in all, so cutting again changes nothing."""
    if len(s) <= most:
        return s
    half = max(0, (most - 48) // 2)  # the note takes at most 48
    return f"{s[:half]}\n... ({len(s) - 2 * half} characters cut) ...\n{s[len(s) - half :]}"


def safe(r: Report) -> Report:
    """A copy of ``r`` with everything the learner controls made safe to show (see above)."""
    left = MESSAGES_MAX
    checks = []
    for c in r.checks:
        message = cut(clean(c.message), max(200, min(MESSAGE_MAX, left)))
        left -= len(message)
        checks.append(replace(c, name=clean(c.name), message=message))
    return replace(
        r,
        exercise=clean(r.exercise),
        file=shown_name(r.file),
        checks=checks,
        mistakes=[clean(m) for m in r.mistakes],
        hints={clean(k): clean(v) for k, v in r.hints.items()},
        output=cut(clean(r.output), OUTPUT_MAX),
        error=None if r.error is None else cut(clean(r.error), MESSAGE_MAX),
    )


def for_terminal(text: str) -> str:
    """A text report on a terminal: its long lines (a failed case names two errors and where
    they are: 200 columns and more) broken to the terminal's width, each continuing under its
    text (``tables.fit``). Written to a file or a pipe, it stays one line per check."""
    if not sys.stdout.isatty():
        return text
    return fit(text, shutil.get_terminal_size().columns)


def text(r: Report, lang: str | None = None) -> str:
    """The report as terminal text in ``lang`` (default: the language it was graded in)."""
    lang = lang or r.lang
    r = safe(r)
    name = f"{r.file}  " if r.file else ""
    if r.error:
        return f"{name}{r.exercise}: {word('grader_error', lang)}: {clean(r.error)}"
    n_ok = sum(c.passed for c in r.checks)
    weighted = has_points(r)
    pts = f", {r.points:g}/{r.max_points:g} pts" if weighted else ""
    if not weighted and r.max_points and r.max_points != len(r.checks):  # gates are not cases
        pts = f" = {r.points:g}/{r.max_points:g}"  # (a file that cannot run gets no cases)
    head = (
        f"{r.exercise}: {n_ok}/{len(r.checks)} {word('checks_passed', lang)} ({word('score', lang)}"
        f" {r.score:.2f}{pts}, {word('seed', lang)} {r.seed}, attnlab {r.version})"
    )
    lines = [name + head, _isolation_line(r.isolation, lang)]
    shown: set[str] = set()
    for c in r.checks:
        mark = word("pass" if c.passed else "fail", lang)
        first, *rest = clean(c.message).splitlines() or [""]
        first, colon = check_message(first, lang), ": " if lang == "en" else "："
        worth = f" [{c.points:g} pts]" if weighted and c.scored else ""
        line = f"  {mark}  {check_name(c.name, lang)}{worth}" + (colon + first if first else "")
        lines.append(line)
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


def has_points(r: Report) -> bool:
    """Whether the checks carry points other than 1 each (a teacher's exercise that sets them):
    then every view shows the points."""
    return any(c.points != 1.0 for c in r.checks if c.scored)


def _where(r: Report, mistake: str, lang: str) -> list[str]:
    """The line a mistake's values first go wrong on, quoted from the graded code."""
    from .mistakes import LEFT_OUT  # a mask left out has no line of its own: where it is missed

    code = r.source.splitlines()
    found = []
    key = "line_unmasked" if mistake in LEFT_OUT else "line_here"
    for n in r.lines.get(mistake, []):
        quoted = clean(code[n - 1].strip()) if 0 < n <= len(code) else ""
        found += [f"      {word(key, lang, n=n)}", f"        {quoted}"]
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
    r = safe(r)
    e, lang = html.escape, r.lang
    verdict = word("passed" if r.passed else "failed", lang)
    color = "#176c2c" if r.passed else "#a11"
    failed = "".join(
        f"<li><b>{e(check_name(c.name, lang))}</b>: "
        f"{e(check_message(clean(c.message).splitlines()[0], lang) if c.message else '')}</li>"
        for c in r.checks
        if not c.passed
    )
    hints = "".join(f"<li><code>{e(m)}</code>: {e(r.hints.get(m, ''))}</li>" for m in r.mistakes)
    return (
        f"<div><p><b style='color:{color}'>{e(r.exercise)}: {e(verdict)}</b> "
        f"({e(word('score', lang))} {r.score:.2f}"
        + (f", {r.points:g}/{r.max_points:g} pts" if has_points(r) else "")
        + f", {e(word('seed', lang))} {r.seed}, "
        f"attnlab {e(r.version)})</p>"
        + (f"<ul>{failed}</ul>" if failed else "")
        + (f"<p>{e(word('mistakes', lang))}</p><ul>{hints}</ul>" if hints else "")
        + "</div>"
    )
