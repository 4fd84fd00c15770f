"""What the lesson texts promise a learner, read from the files themselves: each lesson ends with a
recap table, lines fit a terminal, every code comment has a translation in ja and zh, and a quiz
explains each wrong choice it has words for, in every language alike."""

from __future__ import annotations

import io
import json
import re
import tokenize
import unicodedata
from importlib import resources

import pytest

from attnlab.lessons import source

LESSONS = source.lessons()
MINE = [n for n in LESSONS if n <= 5]  # lessons 6 and 7 have their own tests
KANA = re.compile(r"[\u3040-\u30ff]")
HAN = re.compile(r"[\u4e00-\u9fff]")
CHOICE = re.compile(r"^- ([a-z])\) ")


def width(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def folder(number: int):
    return resources.files("attnlab.lessons") / "content" / f"lesson{number}"


@pytest.mark.parametrize("number", LESSONS)
def test_every_lesson_ends_with_a_prose_only_recap_table(number):
    steps = [c for c in source.cells(number) if c.kind == "step"]
    assert steps[-1].id == "recap" and not steps[-1].code.strip()
    for lang in source.languages(number):
        rows = source.prose(number, lang).texts["recap"].splitlines()
        assert rows[0].startswith("|") and re.match(r"^\|(-+\|)+$", rows[1].replace(" ", ""))
        assert len(rows) >= 5 and all(r.startswith("|") and r.endswith("|") for r in rows)
        assert len({r.count("|") for r in rows}) == 1, (lang, rows)  # every row, same columns


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
@pytest.mark.parametrize("number", MINE)
def test_every_line_of_the_prose_fits_100_columns_tables_and_quiz_included(number, lang):
    text = (folder(number) / f"{lang}.md").read_text(encoding="utf-8")
    long = [(i, width(line)) for i, line in enumerate(text.splitlines(), 1) if width(line) > 100]
    assert not long, long


def _comments(number: int) -> set[str]:
    """Every comment in the lesson's cells (what follows '#', stripped), not the cell headers."""
    text = (folder(number) / "code.py").read_text(encoding="utf-8")
    text = text[text.index("# %% setup") :]
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return {
        t.string[1:].strip()
        for t in tokens
        if t.type == tokenize.COMMENT and not t.string.startswith("# %%")
    }


def _needs_words(comment: str) -> bool:
    """A comment with words in it, not only a shape '(B, H, T, d)', a formula or a name."""
    rest = re.sub(r"\([^()]*\)|\S*[\d_.]\S*", "", comment)  # shapes, float64, W_q, ref.score
    return bool(set(re.findall(r"[A-Za-z]{3,}", rest)) - {"TODO", "tanh"})


@pytest.mark.parametrize("lang", ["ja", "zh"])
@pytest.mark.parametrize("number", MINE)
def test_every_code_comment_is_translated_and_no_translation_is_stale(number, lang):
    catalogue = json.loads((folder(number) / f"comments.{lang}.json").read_text(encoding="utf-8"))
    assert catalogue.keys() == _comments(number)
    for english, words in catalogue.items():
        if not _needs_words(english):
            continue
        assert words != english, english
        if lang == "ja":
            assert KANA.search(words) or HAN.search(words), (english, words)
        else:
            assert HAN.search(words) and not KANA.search(words), (english, words)
    assert _needs_words("TODO: attend to every position") and not _needs_words("(B, h, T, d_k)")


def _quiz(number: int, lang: str) -> list[dict]:
    """The quiz as written: per question its choice letters, the letters with a why line, and
    the answer line."""
    text = (folder(number) / f"{lang}.md").read_text(encoding="utf-8")
    quiz = text.split("\n## quiz\n", 1)[1]
    questions = []
    for block in re.split(r"^### ", quiz, flags=re.M)[1:]:
        q = {"choices": [], "why": [], "answer": "", "model": False}
        for line in block.splitlines():
            m = CHOICE.match(line)
            if m:
                q["choices"].append(m.group(1))
            elif line.startswith("  why: "):
                assert q["choices"], block
                q["why"].append(q["choices"][-1])
            elif line.startswith("answer:"):
                q["answer"] = line[7:].strip()
            elif line.startswith("model answer:"):
                q["model"] = True
        questions.append(q)
    return questions


@pytest.mark.parametrize("number", MINE)
def test_wrong_choices_say_why_and_the_right_one_does_not_in_every_language(number):
    en = _quiz(number, "en")
    assert sum(len(q["why"]) for q in en) >= len([q for q in en if q["choices"]])
    for q in en:
        assert q["answer"] not in q["why"]  # the right choice needs no "why it is wrong"
        if q["choices"]:
            assert set(q["why"]) == set(q["choices"]) - {q["answer"]}, q  # every wrong one
    for lang in ("ja", "zh"):
        other = _quiz(number, lang)
        assert [(q["why"], q["model"]) for q in other] == [(q["why"], q["model"]) for q in en]
