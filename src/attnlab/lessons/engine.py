"""The terminal lesson: ``run`` prints a lesson (or one section) as code, output, explanation;
``run_exercise`` one exercise (the starting code, or the worked answer); ``run_quiz`` asks.

Every step runs the code it shows (see ``runner``). Random examples draw from generators seeded
by (SEED, step), so ``--section K`` prints exactly what the full run prints for step K.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from ..errors import UserError
from ..i18n import LANGS, Text
from ..tables import fit
from . import answers, render, runner, source
from .show import plotting

WORDS = {
    "title": Text("Lesson {n}: {title}", "レッスン {n}：{title}", "第 {n} 课：{title}"),
    "setup": Text("Setup", "準備", "准备"),
    "exercise": Text("Exercise", "練習問題", "练习"),
    "exercises": Text(
        "Exercises (attnlab lesson {n} --exercise K; --export DIR to edit them in a notebook):",
        "練習問題（attnlab lesson {n} --exercise K。--export DIR でノートブックにして編集できます）：",
        "练习（attnlab lesson {n} --exercise K；用 --export DIR 导出到笔记本中修改）：",
    ),
    "quiz": Text(
        "Review questions: attnlab lesson {n} --quiz",
        "確認テスト：attnlab lesson {n} --quiz",
        "小测验：attnlab lesson {n} --quiz",
    ),
    "your_turn": Text(
        "Your turn: edit this code.\n'attnlab lesson {n} --export DIR' writes the lesson as a "
        "script and a notebook with this cell and its check; '--exercise {k} --solution' shows "
        "the worked answer. What the check says about the starting code:",
        "あなたの番です。このコードを書き換えてください。\n"
        "'attnlab lesson {n} --export DIR' で、このセルとそのチェックを含む\n"
        "スクリプトとノートブックが作られます。'--exercise {k} --solution' で\n"
        "模範解答が見られます。最初のコードに対するチェックの結果：",
        "轮到你了：修改这段代码。\n"
        "'attnlab lesson {n} --export DIR' 会把本课写成脚本和笔记本，\n"
        "其中有这个单元格和它的检查；'--exercise {k} --solution' 显示参考答案。\n"
        "对起始代码的检查结果：",
    ),
    "solution": Text("Worked answer:", "模範解答：", "参考答案："),
    "question": Text("Question {i}/{n}: ", "問 {i}/{n}：", "问题 {i}/{n}："),
    "your_answer": Text("Your answer{hint}: ", "あなたの答え{hint}：", "你的答案{hint}："),
    "choices": Text(" (a letter)", "（記号で）", "（填字母）"),
    "score": Text("Score: ", "得点：", "得分："),
    "stopped": Text(
        "Stopped after {asked} of {total} questions.",
        "全 {total} 問中 {asked} 問に答えて終了しました。",
        "共 {total} 题，答了 {asked} 题后停止。",
    ),
    "stop_hint": Text(
        "(an empty answer stops the quiz)",
        "（空のまま Enter で終了します）",
        "（直接回车即可结束测验）",
    ),
    "your_words": Text("Your answer:", "あなたの答え：", "你的答案："),
}


def get(number: int) -> int:
    if number not in source.lessons():
        raise UserError(
            f"no lesson {number}; lessons are {source.lessons()} (see 'attnlab lesson list')"
        )
    return number


def check_lang(lang: str) -> None:
    if lang not in LANGS:
        raise UserError(f"unknown language {lang!r}; choose one of {list(LANGS)}")


def title(number: int, lang: str) -> str:
    """``Lesson 1: ...``, ``レッスン 1：...``, ``第 1 课：...``."""
    return WORDS["title"](lang).format(n=number, title=source.prose(number, lang).title)


INDENT = "   "  # a lesson's title after its number, and its summary under it
FOOTER = Text(  # then the export command on a line of its own, never broken inside
    "Run one: attnlab lesson N. Edit its code (writes lessonN.py and lessonN.ipynb):",
    "実行：attnlab lesson N。コードの編集（lessonN.py と lessonN.ipynb を書き出す）：",
    "运行：attnlab lesson N。修改代码（写出 lessonN.py 和 lessonN.ipynb）：",
)


def list_lessons(lang: str = "en", width: int | None = None) -> str:
    """Each lesson's number and title, its summary under it, indented; every line fitted to
    ``width`` columns (the terminal's, 80 when piped), broken between words or between two
    CJK characters, a continuation indented like the summary."""
    check_lang(lang)
    width = width or render.columns(sys.stdout)
    lines = []
    for n in source.lessons():
        p = source.prose(n, lang)
        title = render.fit(f"{INDENT}{p.title}", width)  # fitted indented, then numbered
        lines += [
            f"{n:<{len(INDENT)}}{title[len(INDENT) :]}",
            render.fit(INDENT + p.summary, width),
        ]
    lines.append("")
    lines.append(render.fit(FOOTER(lang), width))
    lines.append(f"{INDENT}attnlab lesson N --export DIR [--format py|ipynb|both]")  # whole
    return "\n".join(lines)


def _check_args(number: int, lang: str, seed: int, plots) -> None:
    get(number)
    check_lang(lang)
    if plots is not None and Path(plots).exists() and not Path(plots).is_dir():
        raise UserError(f"--plots {plots}: a file, expected a folder for the figures")
    if plots is not None:  # made now, so that a path that cannot be a folder fails first
        Path(plots).mkdir(parents=True, exist_ok=True)
    if seed < 0:
        raise UserError(f"--seed must be >= 0, got {seed}")


def session(
    number: int, lang: str = "en", seed: int = 0, overrides: runner.Overrides | None = None
) -> runner.Session:
    """A fresh session of lesson ``number``; ``overrides`` checked against its setup cell."""
    s = runner.Session(number, seed, lang, overrides=dict(overrides or {}))
    s.code(source.cells(number)[0])  # an unknown constant fails here, before anything runs
    return s


def _show_step(s: runner.Session, cell: source.SourceCell, heading: str, con) -> dict:
    """Print the heading and the code, run it, print its output and the explanation."""
    words = source.prose(s.number, s.lang)
    render.heading(con, heading)
    assigned = {}
    if cell.has_code:
        render.code(con, s.code(cell))
        printed, assigned = s.run_cell(cell)
        render.output(con, printed)
    text = words.texts.get(cell.id, "")
    if text:
        s.said[cell.id] = source.fill(text, s.ns)
        con.print()
        render.prose(con, s.said[cell.id])
    return assigned


def run(
    number: int = 1,
    lang: str = "en",
    seed: int = 0,
    section: int | None = None,
    plots: str | Path | None = None,
    out: TextIO | None = None,
    overrides: runner.Overrides | None = None,
) -> dict[int, dict]:
    """Print lesson ``number`` (or only step ``section``); return what each step assigned.
    ``overrides`` sets constants of the setup cell (``{"STEPS": 5}``)."""
    _check_args(number, lang, seed, plots)
    con = render.console(out or sys.stdout)
    s, steps = session(number, lang, seed, overrides), runner.steps(number)
    words = source.prose(number, lang)
    if section is not None and not 0 <= section <= len(steps):
        raise UserError(f"lesson {number} has sections 0..{len(steps)}, got {section}")
    setup, setup_heading = source.cells(number)[0], f"0. {WORDS['setup'](lang)}"
    with plotting(plots):
        if section == 0:
            return {0: _show_step(s, setup, setup_heading, con)}
        if section is not None:
            s.steps(upto=section - 1)
            heading = f"{section}. {words.titles[steps[section - 1].id]}"
            return {section: _show_step(s, steps[section - 1], heading, con)}
        render.panel(con, title(number, lang))
        render.prose(con, words.intro)
        _show_step(s, setup, setup_heading, con)
        results = {
            k: _show_step(s, cell, f"{k}. {words.titles[cell.id]}", con)
            for k, cell in enumerate(steps, 1)
        }
    _point_onwards(number, lang, con)
    return results


def _point_onwards(number: int, lang: str, con) -> None:
    words = source.prose(number, lang)
    exercises = runner.exercises(number)
    lines = []
    if exercises:
        lines.append(WORDS["exercises"](lang).format(n=number))
        lines += [f"  {k}. {words.titles[cell.id]}" for k, cell in enumerate(exercises, 1)]
    if words.quiz:
        lines.append(WORDS["quiz"](lang).format(n=number))
    if lines:
        con.print()
        con.print(render.fit("\n".join(lines), con.width), soft_wrap=True)


def run_exercise(
    number: int,
    k: int,
    lang: str = "en",
    seed: int = 0,
    plots: str | Path | None = None,
    out: TextIO | None = None,
    solution: bool = False,
    overrides: runner.Overrides | None = None,
) -> dict:
    """Print exercise ``k``: its task and starting code with what the check says about it, or
    (``solution``) the worked answer run and checked. Returns what the shown code assigned."""
    _check_args(number, lang, seed, plots)
    con = render.console(out or sys.stdout)
    exercises = runner.exercises(number)
    if not exercises:
        raise UserError(f"lesson {number} has no exercises")
    if not 1 <= k <= len(exercises):
        raise UserError(f"lesson {number} has exercises 1..{len(exercises)}, got {k}")
    cell = exercises[k - 1]
    words = source.prose(number, lang)
    s = session(number, lang, seed, overrides)
    after = words.texts.get(f"{cell.id}/solution", "")
    versions = runner.versions(number, cell)
    s.steps(runner.needed_steps(number, versions, source.placeholders(after)))  # what it reads
    render.heading(con, f"{WORDS['exercise'](lang)} {k}. {words.titles[cell.id]}")
    render.prose(con, words.texts.get(cell.id, ""))
    shown = runner.part(number, "solution", cell.id)[0] if solution else cell
    if solution:
        con.print("\n" + WORDS["solution"](lang))
    else:
        con.print()
    with plotting(plots):
        render.code(con, s.code(shown))
        printed, assigned = s.run_cell(shown)
        render.output(con, printed)
        if not solution:
            con.print()
            render.panel(con, WORDS["your_turn"](lang).format(n=number, k=k))
        check = runner.check_code(number, cell)
        render.code(con, check)
        printed, _ = s.run(check, "check")  # the report, broken as a terminal shows it
        render.output(con, fit(printed, render.columns(con.file)))  # (grade.view.for_terminal)
    if solution and after:
        con.print()
        render.prose(con, source.fill(after, s.ns))
    return assigned


def _ask(q: source.Question, lang: str, out: TextIO, inp: TextIO) -> str | None:
    """Read an answer until it is one that can be graded; None on an empty line or the end."""
    while True:
        hint = WORDS["choices"](lang) if q.choices else ""
        print(WORDS["your_answer"](lang).format(hint=hint), end="", file=out, flush=True)
        line = inp.readline()
        if not inp.isatty():
            print(line.rstrip("\n"), file=out)  # echo a piped answer, so the record reads well
        if not line.strip():
            return None
        if answers.is_valid(q, line):
            return line.strip()
        letters = ", ".join(c[0] for c in q.choices)
        print(
            answers.WORDS["not_a_choice"](lang).format(answer=line.strip(), letters=letters),
            file=out,
        )


def run_quiz(
    number: int, lang: str = "en", out: TextIO | None = None, inp: TextIO | None = None
) -> tuple[int, int]:
    """Ask each review question, read an answer (a line of ``inp``), say right or wrong and why,
    and end with the score. An answer that is none of the choices is asked again; an empty
    line or the end of input stops with the score so far. A question answered in the
    learner's own words is not scored: its model answer follows. Returns (right, scored)."""
    get(number)
    check_lang(lang)
    out, inp = out or sys.stdout, inp or sys.stdin
    questions = source.prose(number, lang).quiz
    right = scored = asked = 0
    width = render.columns(out)  # questions and answers break between words, never inside one
    print(WORDS["stop_hint"](lang), file=out)
    for i, q in enumerate(questions, 1):
        head = WORDS["question"](lang).format(i=i, n=len(questions)) + q.question
        print("\n" + render.fit(render.plain(head), width), file=out)
        for choice in q.choices:
            print(render.fit(render.plain(f"  {choice}"), width), file=out)
        given = _ask(q, lang, out, inp)
        if given is None:
            print(WORDS["stopped"](lang).format(asked=asked, total=len(questions)), file=out)
            break
        asked += 1
        ok, words = answers.explain(number, i, given, lang)
        scored += q.scored
        right += bool(ok)
        print(render.fit(render.plain(words), width), file=out)
    print(f"\n{WORDS['score'](lang)}{right}/{scored}", file=out)
    return right, scored


__all__ = ["get", "list_lessons", "run", "run_exercise", "run_quiz", "session", "title"]
