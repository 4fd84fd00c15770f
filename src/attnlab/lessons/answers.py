"""Checking what the learner did: an exercise's answer, and a quiz answer.

``check_answer(lesson, exercise, value)`` compares the learner's value with the worked answer's,
computed here from the lesson's own code, and names a known wrong edit when the value is the
one that edit gives (the starting code unchanged, a mistake cell of the lesson). ``quiz`` says
whether an answer is right and explains. Both are what the exported notebooks call.
"""

from __future__ import annotations

import html
import unicodedata
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from ..errors import UserError
from ..i18n import Text
from . import render, runner, source

WORDS = {
    "passed": Text("PASSED", "合格", "通过"),
    "failed": Text("NOT YET", "まだです", "尚未通过"),
    "right": Text("Right.", "正解です。", "正确。"),
    "wrong": Text("Not quite.", "残念、違います。", "不太对。"),
    "unanswered": Text(
        "No answer yet: write it between the quotes and run the cell again.",
        "まだ答えがありません。引用符の間に書いて、もう一度セルを実行してください。",
        "还没有答案：把答案写在引号之间，再运行这个单元格。",
    ),
    "unanswered_script": Text(
        '(to answer: write it between the quotes of answer = "" in this script, or take the '
        "quiz interactively: {command})",
        '（答えるには：このスクリプトの answer = "" の引用符の間に書くか、'
        "{command} で対話形式で解いてください）",
        '（作答：把答案写在本脚本 answer = "" 的引号之间，或用 {command} 交互作答）',
    ),
    "question": Text("Question {k}: ", "問 {k}：", "问题 {k}："),
    "not_a_choice": Text(
        "'{answer}' is not one of the choices; answer with one of: {letters}",
        "「{answer}」は選択肢にありません。次のどれかで答えてください：{letters}",
        "“{answer}”不是选项之一；请用以下之一作答：{letters}",
    ),
    "model_answer": Text("A model answer:", "模範解答：", "参考答案："),
    "answer_is": Text("The answer:", "答え：", "答案："),
    "matches": Text(
        "Your result matches the worked answer.",
        "結果は模範解答と一致します。",
        "你的结果与参考答案一致。",
    ),
    "differs": Text(
        "Your result differs from the worked answer.",
        "結果が模範解答と違います。",
        "你的结果与参考答案不同。",
    ),
    "unchanged": Text(
        "This is still what the starting code gives: make the change the task asks for.",
        "これはまだ最初のコードの結果です。課題が求める変更をしてください。",
        "这仍是起始代码的结果：请按题目要求修改代码。",
    ),
}


@dataclass
class AnswerReport:
    """The verdict on one exercise: ``passed``, ``score`` (0 or 1), the ``mistakes`` named."""

    exercise: str
    passed: bool
    message: str
    mistakes: list[str] = field(default_factory=list)
    hints: dict[str, str] = field(default_factory=dict)
    lang: str = "en"

    @property
    def score(self) -> float:
        return 1.0 if self.passed else 0.0

    def lines(self) -> list[str]:
        """The verdict, the message and each mistake's hint, one line each (not yet fitted)."""
        head = (WORDS["passed"] if self.passed else WORDS["failed"])(self.lang)
        lines = [f"{self.exercise}: {head}", f"  {self.message}"]
        # the mistake's id is a name for programs (and English readers); ja and zh read its hint
        lines += [
            f"  {m}: {self.hints[m]}" if self.lang == "en" else f"  {self.hints[m]}"
            for m in self.mistakes
        ]
        return lines

    def __str__(self) -> str:
        """As a terminal shows it: each line broken to its width between words or between two
        CJK characters, code spans without their backticks."""
        return render.fit(render.plain("\n".join(self.lines())), render.columns())

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#b35900"
        body = "<br>".join(html.escape(line.strip()) for line in self.lines())
        return f'<div style="border-left:4px solid {colour};padding:4px 8px">{body}</div>'


def same(a, b) -> bool:
    """Equal answers: dicts by keys and values, numbers and arrays to ~1e-6."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(same(a[k], b[k]) for k in a)
        )
    try:
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return a == b
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=1e-6, atol=1e-9, equal_nan=True))


def _structure(value):
    """For answers that differ run to run (timings): the keys and the shape of each value."""
    if isinstance(value, dict):
        return {k: np.shape(v) for k, v in value.items()}
    return np.shape(value)


@cache
def _known(number: int, ident: str, seed: int, overrides: tuple = ()) -> tuple:
    """(the worked answer, the starting code's answer, {mistake id: its answer})."""
    cell = _exercise(number, ident)
    answer = cell.options["answer"]
    _, solution, *mistakes = versions = runner.versions(number, cell)
    steps = runner.Session(number, seed, overrides=dict(overrides))
    # once, and only the steps the exercise's versions read; each version runs in a copy
    steps.steps(runner.needed_steps(number, versions))

    def value_of(code_cell: source.SourceCell):
        session = steps.fork()
        session.run_cell(code_cell, quiet=True)
        return session.ns[answer]

    wrong = {c.options["id"]: value_of(c) for c in mistakes}
    return value_of(solution), value_of(cell), wrong


def _exercise(number: int, ident: str) -> source.SourceCell:
    found = [c for c in runner.exercises(number) if c.id == ident]
    if not found:
        names = ", ".join(c.id for c in runner.exercises(number))
        raise UserError(f"lesson {number} has no exercise {ident!r}; it has: {names}")
    return found[0]


def check_answer(
    number: int,
    exercise: str,
    value,
    *,
    seed: int = 0,
    lang: str = "en",
    overrides: dict | None = None,
) -> AnswerReport:
    """The verdict on the learner's ``value`` for ``exercise`` of lesson ``number``: it passes
    when it equals the worked answer's (computed with the same ``overrides`` of the setup, such
    as a training budget); a known wrong edit is named."""
    cell = _exercise(number, exercise)
    known = tuple(sorted((overrides or {}).items()))
    solution, starter, mistakes = _known(number, exercise, seed, known)
    key = _structure if cell.options.get("compare") == "structure" else (lambda v: v)
    if same(key(value), key(solution)):
        return AnswerReport(exercise, True, WORDS["matches"](lang), lang=lang)
    named = {
        m: hint(number, exercise, m, lang) for m, v in mistakes.items() if same(key(value), key(v))
    }
    if not named and same(key(value), key(starter)):
        named = {"unchanged": WORDS["unchanged"](lang)}
    return AnswerReport(exercise, False, WORDS["differs"](lang), list(named), named, lang)


def hint(number: int, exercise: str, mistake: str, lang: str = "en") -> str:
    """The hint for a known wrong edit, its source lines joined into one line as the prose
    renderer joins a paragraph (no space between two CJK characters), for printing to fit."""
    return render.join_lines(
        source.prose(number, lang).texts.get(f"{exercise}/mistake/{mistake}", "")
    )


def _normal(s: str) -> str:
    s = unicodedata.normalize("NFKC", str(s)).strip().lower()
    return "".join(s.split()).rstrip(".。)").removesuffix(")")


def chosen(q: source.Question, answer: str) -> int | None:
    """The index of the choice ``answer`` names (a letter, "b)", or the choice's text), or None."""
    given = _normal(answer)
    for i, choice in enumerate(q.choices):
        letter = choice[0].lower()
        if given in (_normal(letter), _normal(choice[3:]), _normal(choice)):
            return i
    return None


def is_valid(q: source.Question, answer: str) -> bool:
    """Whether ``answer`` can be graded: one of the choices (any answer to a free question)."""
    return bool(str(answer).strip()) and (not q.choices or chosen(q, answer) is not None)


def is_right(q: source.Question, answer: str) -> bool:
    """A choice letter ("b", "b)") or the choice's text, or one of the accepted free answers."""
    if q.choices:
        i = chosen(q, answer)
        return i is not None and any(_normal(a) == _normal(q.choices[i][0]) for a in q.answers)
    return any(_normal(answer) == _normal(a) for a in q.answers)


def natural(q: source.Question) -> str:
    """The accepted answer in one form: the right choice as written, or the first answer."""
    if not q.answers:
        return ""
    if q.choices:
        for choice in q.choices:
            if _normal(choice[0]) == _normal(q.answers[0]):
                return choice
    return q.answers[0]


def explain(number: int, k: int, answer: str, lang: str = "en") -> tuple[bool | None, str]:
    """(right, wrong, or None when not graded; the words to show) for quiz question ``k``.
    Not graded: no answer, an answer that is none of the choices, a question in the learner's
    own words (then the words are the model answer)."""
    questions = source.prose(number, lang).quiz
    if not 1 <= k <= len(questions):
        raise UserError(f"lesson {number} has quiz questions 1..{len(questions)}, got {k}")
    q = questions[k - 1]
    if not str(answer).strip():
        return None, WORDS["unanswered"](lang)
    if not is_valid(q, answer):
        letters = ", ".join(c[0] for c in q.choices)
        return None, WORDS["not_a_choice"](lang).format(answer=str(answer).strip(), letters=letters)
    if not q.scored:
        return None, reveal(q, lang)
    if is_right(q, answer):
        return True, f"{WORDS['right'](lang)}\n{q.explanation}".strip()
    i = chosen(q, answer) if q.choices else None
    why = q.why[i] if i is not None and i < len(q.why) and q.why[i] else ""
    words = [WORDS["wrong"](lang), why, reveal(q, lang)]
    return False, "\n".join(w for w in words if w)


def _labelled(label: str, text: str) -> str:
    """``label`` then ``text``: a space after "The answer:", none after a full-width "答案："."""
    return label + ("" if label.endswith("：") else " ") + text


def reveal(q: source.Question, lang: str = "en") -> str:
    """The right answer (or the model answer) and why."""
    if not q.scored:
        return f"{_labelled(WORDS['model_answer'](lang), q.model_answer)}\n{q.explanation}".strip()
    return f"{_labelled(WORDS['answer_is'](lang), natural(q))}\n{q.explanation}".strip()


def quiz(number: int, k: int, answer: str, lang: str = "en") -> bool | None:
    """Check the answer to quiz question ``k`` of lesson ``number``; print why. (Called by the
    exported lesson: in a script, an empty answer points to the interactive quiz.)"""
    right, words = explain(number, k, answer, lang)
    if not str(answer).strip() and not _in_kernel():  # a script: the question, and how to answer
        q = source.prose(number, lang).quiz[k - 1]
        lines = [WORDS["question"](lang).format(k=k) + q.question, *(f"  {c}" for c in q.choices)]
        command = f"attnlab lesson {number} --quiz".replace(" ", render.NBSP)  # never broken
        words = "\n".join([*lines, WORDS["unanswered_script"](lang).format(command=command)])
    # printed text, not markdown: the code without its backticks; lines broken to fit
    print(render.fit(render.plain(words), render.columns()))
    return right


def _in_kernel() -> bool:
    from .show import _in_kernel as in_kernel

    return in_kernel()


__all__ = ["AnswerReport", "check_answer", "chosen", "explain", "is_right", "is_valid"]
__all__ += ["hint", "natural", "quiz", "reveal", "same"]
