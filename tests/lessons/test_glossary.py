"""One term per concept, everywhere a learner reads: the lessons' prose and quiz, the code comments
in their language, and the grader's hints use the glossary's term, never a competing one.

``content/glossary.<lang>.json`` maps a concept to its one ``term`` and the ``competing`` terms
to flag (regular expressions, so that "注意が必要", plain Japanese for "take care", is not taken
for attention). ``other_senses`` lists whole texts where a competing word means something else
(zh 得分 is the grade a quiz or grader gives, not an attention score).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
import re
from functools import cache
from importlib import resources

import pytest

from attnlab.i18n import Text
from attnlab.lessons import source

LANGS = ("ja", "zh")
KANA = re.compile(r"[\u3040-\u30ff]")
CODE_SPAN = re.compile(r"`[^`\n]*`")


@cache
def glossary(lang: str) -> dict:
    path = resources.files("attnlab.lessons") / "content" / f"glossary.{lang}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def offenders(text: str, lang: str) -> list[str]:
    """'concept: competing (in: ...)' for each competing term found in ``text``."""
    found = []
    text = CODE_SPAN.sub("", text)
    for concept, entry in glossary(lang).items():
        if text.strip() in entry.get("other_senses", ()):
            continue
        for pattern in entry["competing"]:
            for m in re.finditer(pattern, text):
                around = text[max(0, m.start() - 15) : m.end() + 15].replace("\n", " ")
                found.append(f"{concept}: {m.group(0)!r} in …{around}…")
    return found


def lesson_texts(number: int, lang: str) -> dict[str, str]:
    """Everything lesson ``number`` shows in ``lang``: its prose file and its code comments."""
    folder = resources.files("attnlab.lessons") / "content" / f"lesson{number}"
    texts = {f"{lang}.md": (folder / f"{lang}.md").read_text(encoding="utf-8")}
    catalogue = folder / f"comments.{lang}.json"
    if catalogue.is_file():
        for english, words in json.loads(catalogue.read_text(encoding="utf-8")).items():
            texts[f"comment {english!r}"] = words
    return texts


def test_each_glossary_names_one_term_per_concept_and_flags_competing_ones():
    for lang in LANGS:
        terms = [entry["term"] for entry in glossary(lang).values()]
        assert len(set(terms)) == len(terms), lang
        for entry in glossary(lang).values():
            assert entry["competing"], entry
            for pattern in entry["competing"]:
                re.compile(pattern)
                assert not re.search(pattern, entry["term"]), (lang, entry)
    # the decided terms (the lead's list); what they must catch, and what they must leave alone
    assert [glossary("ja")[c]["term"] for c in ("query", "key", "value", "score")] == [
        "クエリ",
        "キー",
        "バリュー",
        "スコア",
    ]
    assert glossary("zh")["score"]["term"] == "分数" and glossary("zh")["mask"]["term"] == "掩码"
    assert offenders("クエリ・キー・値は同じ入力の三つの射影です。", "ja")
    assert offenders("各ヘッドの注意の重みを見ます。", "ja")
    assert offenders("点数の表", "ja") and offenders("softmax の前にマスクします。", "ja")
    assert offenders("注意力得分矩阵", "zh")
    for fine in ("型には注意が必要です。", "式は softmax(Q Kᵀ / √d) V です。", "`softmax` を使う"):
        assert not offenders(fine, "ja"), fine
    assert not offenders("得分", "zh") and not offenders("数值、中位数和最大值", "zh")


@pytest.mark.parametrize("lang", LANGS)
def test_lessons_use_one_term_per_concept(lang):
    found = []
    for number in source.lessons():
        for where, text in lesson_texts(number, lang).items():
            found += [f"lesson {number} {where}: {o}" for o in offenders(text, lang)]
    assert not found, "\n".join(found)
    prose = "".join(lesson_texts(n, lang)[f"{lang}.md"] for n in source.lessons())
    for concept, entry in glossary(lang).items():
        assert entry["term"] in prose, (lang, concept)  # the term itself is in use


def _grader_texts() -> list[tuple[str, str, str]]:
    """(module, lang, text) for every Japanese and Chinese text the grader's modules hold:
    Text objects, and (ja, zh) pairs of strings."""
    import attnlab.grade as grade

    found: list[tuple[str, str, str]] = []

    def walk(name: str, value, depth: int = 0) -> None:
        if depth > 6:
            return
        if isinstance(value, Text):
            found.extend([(name, "ja", value.ja), (name, "zh", value.zh)])
        elif (
            isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value)
        ):
            if KANA.search(value[0]) and not KANA.search(value[1]):
                found.extend([(name, "ja", value[0]), (name, "zh", value[1])])
        elif isinstance(value, str) and KANA.search(value):
            found.append((name, "ja", value))
        elif isinstance(value, dict):
            for v in value.values():
                walk(name, v, depth + 1)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(name, v, depth + 1)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):  # e.g. an exercise
            for f in dataclasses.fields(value):
                walk(name, getattr(value, f.name), depth + 1)

    for info in pkgutil.walk_packages(grade.__path__, "attnlab.grade."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            walk(info.name, value)
    return found


# The grader's texts belong to the grade engineer. Until they follow the glossary, what this
# test finds there is reported (an expected failure, with the list) rather than failing the
# suite; set STRICT_GRADER = True once it is clean.
STRICT_GRADER = True


def test_grader_texts_use_one_term_per_concept():
    texts = _grader_texts()
    assert len(texts) > 50  # the hints were found
    found = sorted(
        {f"{module} ({lang}): {o}" for module, lang, text in texts for o in offenders(text, lang)}
    )
    if found and not STRICT_GRADER:
        pytest.xfail("competing terms in the grader's texts:\n" + "\n".join(found))
    assert not found, "\n".join(found)
