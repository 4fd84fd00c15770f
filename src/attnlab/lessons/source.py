"""A lesson's literate source: its code, written once, and its prose, one file per language.

``content/lessonN/code.py`` is a plain script in ``py:percent`` cells. A cell header names
what the cell is::

    # %% setup                          imports, SEED and LANG (the lesson sets both); other
                                        constants here (STEPS = 1500) can be overridden
    # %% step averaging                 a step: its code runs, then the prose explains it
    # %% step recap                     a step with no code: only its prose is shown
    # %% exercise query answer=w        the starting code of an exercise (checks variable w)
    # %% exercise head grade=self_attention   ... or one checked by attnlab.grade.check
    # %% solution query                 the worked answer
    # %% mistake query wrong_key        a typical wrong edit, which the check must name

``content/lessonN/<lang>.md`` holds the prose, keyed by the same ids::

    # Title
    > one-line summary
    Introduction ...
    ## averaging: Averaging with one matrix product
    Text shown after the step's output; {name:.2f} is a number the step computed.
    [[if learned]]A sentence shown when the step set learned to a true value.[[else]]One
    shown otherwise (the [[else]] part is optional).[[end]] A claim about an outcome is chosen
    this way, from what the code computed, never written as a fixed sentence.
    ## query: Change the query of 光
    The task ...
    ### solution
    Text shown after the solution's output.
    ### mistake wrong_key
    What this mistake means.
    ## quiz
    ### The question?
    - a) one choice
      why: why a) is wrong (optional: an indented ``why:`` line under a choice, shown to a
      learner who picks it)
    - b) another
    answer: b
    The explanation.
    ### A free-text question?
    answer: 1e6 | 1,000,000
    The explanation.
    ### A review question answered in the learner's own words?
    model answer: What a good answer says, shown after the learner's; it may go on over
    the next lines, up to a blank line. With no ``answer:`` line the question is not scored:
    the learner writes, then compares with the model answer.

    The explanation (optional).

The first accepted answer is the one shown to the learner. ``content/lessonN/comments.<lang>.json``
translates the code's comments (see ``comments``). Adding a language is adding
``<lang>.md`` (and ``comments.<lang>.json``) files. Reading a lesson computes nothing.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

CELL = re.compile(r"^# %% (setup|step|exercise|solution|mistake)(?: (\S+))?(.*)$")


@dataclass(frozen=True)
class SourceCell:
    kind: str  # setup, step, exercise, solution, mistake
    id: str  # the step or exercise it belongs to ("" for setup)
    code: str
    options: dict[str, str] = field(default_factory=dict)  # answer=VAR, grade=NAME, or a mistake id

    @property
    def has_code(self) -> bool:
        """False for a prose-only step (``# %% step recap`` and nothing under it)."""
        return bool(self.code.strip())


@dataclass(frozen=True)
class Question:
    question: str
    choices: tuple[str, ...]  # "a) ..." lines; empty for a free-text question
    answers: tuple[str, ...]  # accepted answers: choice letters, or texts; empty: not scored
    explanation: str
    why: tuple[str, ...] = ()  # per choice: why that choice is wrong ("" when not written)
    model_answer: str = ""  # a free-text question's model answer, shown after the learner's

    @property
    def scored(self) -> bool:
        return bool(self.answers)


@dataclass(frozen=True)
class Prose:
    """One language's words for one lesson."""

    title: str
    summary: str
    intro: str
    titles: dict[str, str]  # id -> heading
    texts: dict[str, str]  # id -> text; "id/solution", "id/mistake/ID" for exercise parts
    quiz: tuple[Question, ...]


def _content(number: int):
    return resources.files("attnlab.lessons") / "content" / f"lesson{number}"


@cache
def cells(number: int) -> tuple[SourceCell, ...]:
    """The code cells of lesson ``number``, in file order."""
    text = (_content(number) / "code.py").read_text(encoding="utf-8")
    found: list[SourceCell] = []
    header, body = None, []
    for line in [*text.splitlines(), "# %% setup END"]:
        m = CELL.match(line)
        if not m:
            if header is not None:
                body.append(line)
            continue
        if header is not None:
            found.append(_cell(header, body))
        header, body = m, []
    return tuple(found)


def _cell(m: re.Match, body: list[str]) -> SourceCell:
    kind, ident, rest = m.group(1), m.group(2) or "", m.group(3).split()
    options = dict(item.split("=", 1) if "=" in item else ("id", item) for item in rest)
    return SourceCell(kind, ident, "\n".join(body).strip("\n"), options)


def lessons() -> list[int]:
    """The lesson numbers that have content."""
    root = resources.files("attnlab.lessons") / "content"
    return sorted(int(p.name[6:]) for p in root.iterdir() if p.name.startswith("lesson"))


def languages(number: int) -> list[str]:
    return sorted(p.name[:-3] for p in _content(number).iterdir() if p.name.endswith(".md"))


@cache
def prose(number: int, lang: str) -> Prose:
    """The words of lesson ``number`` in ``lang``."""
    text = (_content(number) / f"{lang}.md").read_text(encoding="utf-8")
    head, *parts = re.split(r"^## ", text, flags=re.M)
    lines = head.strip().splitlines()
    title = lines[0].removeprefix("# ").strip()
    summary = lines[1].removeprefix("> ").strip() if len(lines) > 1 else ""
    intro = "\n".join(lines[2:]).strip()
    titles: dict[str, str] = {}
    texts: dict[str, str] = {}
    quiz: tuple[Question, ...] = ()
    for part in parts:
        heading, _, body = part.partition("\n")
        if heading.strip() == "quiz":
            quiz = tuple(_question(q) for q in re.split(r"^### ", body, flags=re.M)[1:])
            continue
        ident, _, name = heading.partition(":")
        ident = ident.strip()
        titles[ident] = name.strip()
        main, *subs = re.split(r"^### ", body, flags=re.M)
        texts[ident] = main.strip()
        for sub in subs:
            sub_head, _, sub_body = sub.partition("\n")
            texts[f"{ident}/{'/'.join(sub_head.split())}"] = sub_body.strip()
    return Prose(title, summary, intro, titles, texts, quiz)


def _join(lines: list[str]) -> str:
    """A model answer's lines as one: no space between two CJK characters (render's rule)."""
    from .render import join_lines  # the rich console is not needed to read a lesson

    return join_lines("\n".join(lines)).strip()


def _question(block: str) -> Question:
    question, _, body = block.partition("\n")
    choices, why, answers, model, explanation = [], [], (), [], []
    into = explanation  # where a continuation line goes
    for line in body.strip().splitlines():
        if re.match(r"^- [a-z]\) ", line):
            choices.append(line[2:].strip())
            why.append("")
            into = explanation
        elif choices and re.match(r"^\s+why:", line):
            why[-1] = line.strip()[4:].strip()
        elif line.startswith("answer:") and not answers:
            answers = tuple(a.strip() for a in line[7:].split("|") if a.strip())
        elif line.startswith("model answer:"):
            model.append(line[13:].strip())
            into = model
        elif into is model and line.strip():
            model.append(line.strip())
        else:
            into = explanation
            explanation.append(line)
    return Question(
        question.strip(),
        tuple(choices),
        answers,
        _join(explanation),
        tuple(why),
        _join(model),
    )


# [[if NAME]]shown when NAME is true[[else]]shown when it is not[[end]] (no nesting)
CHOICE = re.compile(r"\[\[if (not )?([A-Za-z_]\w*)\]\](.*?)(?:\[\[else\]\](.*?))?\[\[end\]\]", re.S)


def conditions(text: str) -> set[str]:
    """The names a text's ``[[if NAME]]`` choices read."""
    return {m.group(2) for m in CHOICE.finditer(text)}


def placeholders(text: str) -> set[str]:
    """The names a text reads: its ``{name...}`` fields (``{w[3]:.2f}`` reads ``w``) and the
    conditions of its ``[[if NAME]]`` choices."""
    names = conditions(text)
    for _, field_name, _, _ in string.Formatter().parse(CHOICE.sub("", text)):
        if field_name is not None:
            names.add(re.split(r"[.\[]", field_name, maxsplit=1)[0])
    for m in CHOICE.finditer(text):
        for part in (m.group(3), m.group(4) or ""):
            names |= placeholders(part)
    return names


def choose(text: str, values: dict) -> str:
    """The text with each ``[[if NAME]]A[[else]]B[[end]]`` replaced by A when ``values[NAME]``
    is true (B, or nothing, when it is not): the sentence the computed results support."""

    def pick(m: re.Match) -> str:
        negate, name, yes, no = m.group(1), m.group(2), m.group(3), m.group(4) or ""
        return yes if bool(values[name]) != bool(negate) else no

    return CHOICE.sub(pick, text)


def fill(text: str, values: dict) -> str:
    """The text with its choices made and its placeholders replaced by the computed
    ``values``."""
    return choose(text, values).format_map(values)


__all__ = [
    "Prose",
    "Question",
    "SourceCell",
    "cells",
    "choose",
    "conditions",
    "fill",
    "languages",
    "lessons",
    "placeholders",
    "prose",
]
