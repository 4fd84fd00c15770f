"""The lesson runner: ``run`` prints a lesson (or one section), ``run_exercise`` one exercise,
``run_quiz`` the review questions. ``LESSONS`` maps a number to a ``Lesson``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..errors import UserError
from ..i18n import LANGS
from .base import EXERCISE_BASE, Context, Lesson, Step
from .lesson1 import LESSON as LESSON1
from .lesson2 import LESSON as LESSON2
from .lesson3 import LESSON as LESSON3
from .lesson4 import LESSON as LESSON4
from .lesson5 import LESSON as LESSON5

LESSONS: dict[int, Lesson] = {
    lesson.number: lesson for lesson in (LESSON1, LESSON2, LESSON3, LESSON4, LESSON5)
}


def get(number: int) -> Lesson:
    if number not in LESSONS:
        raise UserError(
            f"no lesson {number}; lessons are {sorted(LESSONS)} (see 'attnlab lesson list')"
        )
    return LESSONS[number]


def _pick(steps: list[Step] | tuple, k: int, what: str, lesson: Lesson) -> Step:
    if not steps:
        raise UserError(f"lesson {lesson.number} has no {what}")
    if not 1 <= k <= len(steps):
        raise UserError(f"lesson {lesson.number} has {what} 1..{len(steps)}, got {k}")
    return steps[k - 1]


def _check_lang(lang: str) -> None:
    if lang not in LANGS:
        raise UserError(f"unknown language {lang!r}; choose one of {list(LANGS)}")


def list_lessons(lang: str = "en") -> str:
    _check_lang(lang)
    lines = []
    for n, lesson in sorted(LESSONS.items()):
        lines.append(f"{n}  {lesson.title(lang)}")
        lines.append(f"   {lesson.summary(lang)}")
    return "\n".join(lines)


def _ctx(lesson: Lesson, lang: str, seed: int, out: TextIO, plots: str | Path | None) -> Context:
    _check_lang(lang)
    if plots is not None and Path(plots).exists() and not Path(plots).is_dir():
        raise UserError(f"--plots {plots}: a file, expected a folder for the figures")
    if seed < 0:
        raise UserError(f"--seed must be >= 0, got {seed}")
    return Context(
        lang=lang,
        seed=seed,
        out=out,
        plots=None if plots is None else Path(plots),
        lesson=lesson.number,
    )


def _run_step(ctx: Context, part: int, heading: str, fn: Callable[[Context], dict | None]) -> dict:
    ctx.part = part
    ctx.say(f"\n== {heading}")
    return fn(ctx) or {}


def run(
    number: int = 1,
    lang: str = "en",
    seed: int = 0,
    section: int | None = None,
    plots: str | Path | None = None,
    out: TextIO | None = None,
) -> dict[int, dict]:
    """Print lesson ``number`` (or only ``section``); return each section's computed results."""
    lesson = get(number)
    ctx = _ctx(lesson, lang, seed, out or sys.stdout, plots)
    if section is not None:
        step = _pick(lesson.sections, section, "sections", lesson)
        return {section: _run_step(ctx, section, f"{section}. {step.title(lang)}", step.run)}
    ctx.say(f"{ctx.t('Lesson', 'レッスン')} {lesson.number}: {lesson.title(lang)}\n")
    ctx.say(lesson.intro(lang))
    results = {
        k: _run_step(ctx, k, f"{k}. {s.title(lang)}", s.run)
        for k, s in enumerate(lesson.sections, 1)
    }
    if lesson.outro is not None:
        ctx.say("\n" + lesson.outro(lang))
    if lesson.exercises:
        ctx.say(
            "\n"
            + ctx.t(
                f"Exercises (attnlab lesson {number} --exercise K):",
                f"練習問題（attnlab lesson {number} --exercise K）：",
            )
        )
        for k, ex in enumerate(lesson.exercises, 1):
            ctx.say(f"  {k}. {ex.title(lang)}")
    if lesson.quiz:
        ctx.say(
            ctx.t(
                f"Review questions: attnlab lesson {number} --quiz",
                f"確認テスト：attnlab lesson {number} --quiz",
            )
        )
    return results


def run_exercise(
    number: int,
    k: int,
    lang: str = "en",
    seed: int = 0,
    plots: str | Path | None = None,
    out: TextIO | None = None,
) -> dict:
    lesson = get(number)
    step = _pick(lesson.exercises, k, "exercises", lesson)
    ctx = _ctx(lesson, lang, seed, out or sys.stdout, plots)
    return _run_step(
        ctx, EXERCISE_BASE + k, f"{ctx.t('Exercise', '練習問題')} {k}. {step.title(lang)}", step.run
    )


def run_quiz(
    number: int,
    lang: str = "en",
    out: TextIO | None = None,
    inp: TextIO | None = None,
    interactive: bool | None = None,
) -> int:
    """Ask the review questions one at a time. Interactive (a terminal): the learner answers,
    then sees the model answer. Otherwise every question is printed with its answer.
    Returns the number of questions."""
    lesson = get(number)
    _check_lang(lang)
    out, inp = out or sys.stdout, inp or sys.stdin
    interactive = inp.isatty() if interactive is None else interactive

    def t(en: str, ja: str) -> str:
        return ja if lang == "ja" else en

    for i, q in enumerate(lesson.quiz, 1):
        print(f"\n{t('Question', '問')} {i}/{len(lesson.quiz)}: {q.question(lang)}", file=out)
        if interactive:
            print(
                t(
                    "Your answer (Enter to see the model answer): ",
                    "あなたの答え（Enter で模範解答）：",
                ),
                end="",
                file=out,
                flush=True,
            )
            if not inp.readline():
                break
        print(f"{t('Model answer', '模範解答')}:\n{q.answer(lang)}", file=out)
    return len(lesson.quiz)


__all__ = ["LESSONS", "get", "list_lessons", "run", "run_exercise", "run_quiz"]
