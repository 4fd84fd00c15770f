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
from . import answers, runner, source
from .render import code_block, wants_colour
from .show import plotting

WORDS = {
    "lesson": Text("Lesson", "レッスン", "第"),
    "lesson_suffix": Text("", "", "课"),
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
        "复习题：attnlab lesson {n} --quiz",
    ),
    "your_turn": Text(
        "Your turn: edit this code. 'attnlab lesson {n} --export DIR' writes the lesson as a\n"
        "script and a notebook with this cell and its check; '--exercise {k} --solution' shows\n"
        "the worked answer. What the check says about the starting code:",
        "あなたの番です。このコードを書き換えます。'attnlab lesson {n} --export DIR' で、このセルと\n"
        "その確認を含むスクリプトとノートブックが作られます。'--exercise {k} --solution' で模範解答\n"
        "が見られます。最初のコードに対する確認の結果：",
        "轮到你了：修改这段代码。'attnlab lesson {n} --export DIR' 会把本课写成脚本和笔记本，\n"
        "其中有这个单元格和它的检查；'--exercise {k} --solution' 显示参考答案。\n"
        "检查对起始代码的结论：",
    ),
    "solution": Text("Worked answer:", "模範解答：", "参考答案："),
    "question": Text("Question", "問", "问题"),
    "your_answer": Text("Your answer: ", "あなたの答え：", "你的答案："),
    "choices": Text("(a letter)", "（記号で）", "（填字母）"),
    "score": Text("Score", "得点", "得分"),
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
    return (
        f"{WORDS['lesson'](lang)} {number}{WORDS['lesson_suffix'](lang)}: "
        + source.prose(number, lang).title
    )


def list_lessons(lang: str = "en") -> str:
    check_lang(lang)
    lines = []
    for n in source.lessons():
        p = source.prose(n, lang)
        lines += [f"{n}  {p.title}", f"   {p.summary}"]
    lines.append("")
    lines.append(
        Text(
            "Run one: attnlab lesson N. Edit its code: attnlab lesson N --export DIR "
            "[--format py|ipynb|both] writes lessonN.py and lessonN.ipynb.",
            "実行：attnlab lesson N。コードを編集するには：attnlab lesson N --export DIR "
            "[--format py|ipynb|both] で lessonN.py と lessonN.ipynb を書き出します。",
            "运行：attnlab lesson N。修改代码：attnlab lesson N --export DIR "
            "[--format py|ipynb|both] 会写出 lessonN.py 和 lessonN.ipynb。",
        )(lang)
    )
    return "\n".join(lines)


def _check_args(number: int, lang: str, seed: int, plots) -> None:
    get(number)
    check_lang(lang)
    if plots is not None and Path(plots).exists() and not Path(plots).is_dir():
        raise UserError(f"--plots {plots}: a file, expected a folder for the figures")
    if seed < 0:
        raise UserError(f"--seed must be >= 0, got {seed}")


def _show_step(s: runner.Session, cell: source.Cell, heading: str, out: TextIO) -> dict:
    """Print the heading and the code, run it, print its output and the explanation."""
    words = source.prose(s.number, s.lang)
    print(f"\n== {heading}", file=out)
    print(code_block(runner.code_of(cell, s.seed, s.lang), wants_colour(out)), file=out)
    printed, assigned = s.run_cell(cell)
    print(printed, end="", file=out)
    text = words.texts.get(cell.id, "")
    if text:
        print("\n" + source.fill(text, s.ns), file=out)
    return assigned


def run(
    number: int = 1,
    lang: str = "en",
    seed: int = 0,
    section: int | None = None,
    plots: str | Path | None = None,
    out: TextIO | None = None,
) -> dict[int, dict]:
    """Print lesson ``number`` (or only step ``section``); return what each step assigned."""
    _check_args(number, lang, seed, plots)
    out = out or sys.stdout
    s, steps = runner.Session(number, seed, lang), runner.steps(number)
    words = source.prose(number, lang)
    if section is not None and not 1 <= section <= len(steps):
        raise UserError(f"lesson {number} has sections 1..{len(steps)}, got {section}")
    with plotting(plots):
        if section is not None:
            s.steps(upto=section - 1)
            heading = f"{section}. {words.titles[steps[section - 1].id]}"
            return {section: _show_step(s, steps[section - 1], heading, out)}
        print(f"{title(number, lang)}\n\n{words.intro}", file=out)
        setup = source.cells(number)[0]
        _show_step(s, setup, f"0. {WORDS['setup'](lang)}", out)
        results = {
            k: _show_step(s, cell, f"{k}. {words.titles[cell.id]}", out)
            for k, cell in enumerate(steps, 1)
        }
    _point_onwards(number, lang, out)
    return results


def _point_onwards(number: int, lang: str, out: TextIO) -> None:
    words = source.prose(number, lang)
    exercises = runner.exercises(number)
    if exercises:
        print("\n" + WORDS["exercises"](lang).format(n=number), file=out)
        for k, cell in enumerate(exercises, 1):
            print(f"  {k}. {words.titles[cell.id]}", file=out)
    if words.quiz:
        print(WORDS["quiz"](lang).format(n=number), file=out)


def run_exercise(
    number: int,
    k: int,
    lang: str = "en",
    seed: int = 0,
    plots: str | Path | None = None,
    out: TextIO | None = None,
    solution: bool = False,
) -> dict:
    """Print exercise ``k``: its task and starting code with what the check says about it, or
    (``solution``) the worked answer run and checked. Returns what the shown code assigned."""
    _check_args(number, lang, seed, plots)
    out = out or sys.stdout
    exercises = runner.exercises(number)
    if not exercises:
        raise UserError(f"lesson {number} has no exercises")
    if not 1 <= k <= len(exercises):
        raise UserError(f"lesson {number} has exercises 1..{len(exercises)}, got {k}")
    cell = exercises[k - 1]
    words = source.prose(number, lang)
    s = runner.Session(number, seed, lang)
    s.steps()
    print(f"\n== {WORDS['exercise'](lang)} {k}. {words.titles[cell.id]}", file=out)
    print(words.texts.get(cell.id, ""), file=out)
    shown = runner.part(number, "solution", cell.id)[0] if solution else cell
    if solution:
        print("\n" + WORDS["solution"](lang), file=out)
    else:
        print(file=out)
    with plotting(plots):
        print(code_block(shown.code, wants_colour(out)), file=out)
        printed, assigned = s.run_cell(shown)
        print(printed, end="", file=out)
        if not solution:
            print("\n" + WORDS["your_turn"](lang).format(n=number, k=k), file=out)
        check = runner.check_code(number, cell)
        print(code_block(check, wants_colour(out)), file=out)
        printed, _ = s.run(check, "check")
        print(printed, end="", file=out)
    after = words.texts.get(f"{cell.id}/solution", "")
    if solution and after:
        print("\n" + source.fill(after, s.ns), file=out)
    return assigned


def run_quiz(
    number: int, lang: str = "en", out: TextIO | None = None, inp: TextIO | None = None
) -> tuple[int, int]:
    """Ask each review question, read an answer (a line of ``inp``), say right or wrong with
    the explanation, and end with the score. Returns (right, questions)."""
    get(number)
    check_lang(lang)
    out, inp = out or sys.stdout, inp or sys.stdin
    questions = source.prose(number, lang).quiz
    right = 0
    for i, q in enumerate(questions, 1):
        print(f"\n{WORDS['question'](lang)} {i}/{len(questions)}: {q.question}", file=out)
        for choice in q.choices:
            print(f"  {choice}", file=out)
        hint = f" {WORDS['choices'](lang)}" if q.choices else ""
        print(WORDS["your_answer"](lang) + hint + " ", end="", file=out, flush=True)
        line = inp.readline()
        if not inp.isatty():
            print(line.rstrip("\n"), file=out)  # echo a piped answer, so the record reads well
        ok, words = answers.explain(number, i, line.strip(), lang)
        if ok is None:  # no answer: show the right one and move on
            words = answers.reveal(q, lang)
        right += bool(ok)
        print(words, file=out)
    print(f"\n{WORDS['score'](lang)}: {right}/{len(questions)}", file=out)
    return right, len(questions)


__all__ = ["get", "list_lessons", "run", "run_exercise", "run_quiz", "title"]
