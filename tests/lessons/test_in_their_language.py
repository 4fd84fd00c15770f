"""What a learner reads in a Japanese or Chinese run of a lesson is in that language.

Each lesson's terminal run in ja and zh (``helpers.lesson_run``: the runs tests/lessons'
other modules read, once per process) is searched for English words. The code lines (``│``)
are code, and the prose may name code: a word is fine when the lesson's own code uses it as a
name (every NAME token of every cell, keywords included), when it is a data word of the lesson
(a string in a constant such as ``WORDS = ["The", "cat", ...]``), when the language's prose
writes it in backticks, or when it is one of the terms that stay English (``STAY_ENGLISH``).
Anything else is an English word the learner was left to read: a print string, a table
header, a label or a check line that missed its translation (``content/lessonN/strings.<lang>
.json``, ``comments.<lang>.json``, the lesson's prose).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache

import pytest

from attnlab.lessons import comments, source
from helpers import lesson_run

LANGS = ("ja", "zh")
LOCALIZED_ELSEWHERE = {  # lessons whose print strings another branch translates
    6: "localized on branch les31 (lesson 6's print strings and tables)",
    7: "localized on branch les31 (lesson 7's print strings and tables)",
}

# Terms a Japanese or Chinese text writes in English too: names of models, libraries, units and
# file formats, and the Python literals a lesson prints.
STAY_ENGLISH = {
    *("softmax", "numpy", "pytorch", "torch", "gpt", "bert", "rnn", "lstm", "gru", "sdpa"),
    *("transformer", "seq2seq", "bahdanau", "luong", "vaswani", "attnlab", "python", "jupyter"),
    *("true", "false", "none", "nan", "inf", "todo", "ok"),
    *("mib", "kib", "gib", "tib", "gflop", "gflops", "nats", "ms", "png", "cpu", "gpu", "dir"),
    *("tanh", "sin", "cos", "exp", "log", "relu", "gelu", "lse", "ln", "lr", "qkv", "sdpa"),
    *("flashattention", "flash", "kv", "mha", "gqa", "mqa", "rope", "layernorm", "dropout"),
    *("autograd", "rank"),
}
# Phrases that stay English: a paper's title, a standard name, and Luong's score functions
# (lesson 4 keeps dot, general, additive and concat as the code's names, in prose too)
PHRASES = re.compile(r"Attention\s+Is\s+All\s+You\s+Need|one-hot|scaled\s+dot")
# Messages PyTorch itself raises, printed as they are (the prose explains them)
QUOTED = (
    re.compile(r"value cannot be converted to type \S+ without overflow"),
    re.compile(r"view size is not compatible with input tensor's size and stride.*"),
)
COMMAND = re.compile(r"attnlab(?: [a-z]+)+(?: \d+)?|--[a-z-]+(?: [A-Z]+)?")
WORD = re.compile(r"[A-Za-z0-9_]+")
CODE_SPAN = re.compile(r"`([^`\n]+)`")


@cache
def known_words(number: int, lang: str) -> frozenset[str]:
    """The words lesson ``number`` may show in ``lang`` without translating them (lower case)."""
    words: set[str] = set(STAY_ENGLISH)
    for cell in source.cells(number):
        code = cell.code
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(code + "\n").readline))
        except (tokenize.TokenError, SyntaxError):
            tokens = []
        words |= {t.string.lower() for t in tokens if t.type == tokenize.NAME}
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name | ast.arg | ast.Attribute | ast.FunctionDef):
                words.add(getattr(node, "id", None) or getattr(node, "arg", None) or "")
                words.add(getattr(node, "attr", None) or getattr(node, "name", None) or "")
            if isinstance(node, ast.Dict):  # keys the code computes with: scores["dot"]
                words |= {
                    k.value
                    for k in node.keys
                    if isinstance(k, ast.Constant) and str(k.value).isidentifier()
                }
            # data: strings held by UPPER_CASE constants
            if isinstance(node, ast.Assign) and all(
                isinstance(t, ast.Name) and t.id.isupper() for t in node.targets
            ):
                for c in ast.walk(node.value):
                    if isinstance(c, ast.Constant) and isinstance(c.value, str):
                        words |= {w.lower() for w in WORD.findall(c.value)}
    prose = (source._content(number) / f"{lang}.md").read_text(encoding="utf-8")
    for span in CODE_SPAN.findall(prose):
        words |= {w.lower() for w in WORD.findall(span)}
    return frozenset(w.lower() for w in words if isinstance(w, str))


def english_words(text: str, number: int, lang: str) -> list[str]:
    """Each line of ``text`` (a terminal run) that shows an English word the lesson may not
    show in ``lang``, with the words."""
    known = known_words(number, lang)
    found = []
    for line in PHRASES.sub(" ", text).splitlines():
        if line.lstrip().startswith("│"):  # a line of code
            continue
        rest = COMMAND.sub(" ", line)
        for quoted in QUOTED:
            rest = quoted.sub(" ", rest)
        bad = [
            w
            for w in WORD.findall(rest)
            if len(w) > 1 and w.isalpha() and w.isascii() and w.lower() not in known
        ]
        if bad:
            found.append(f"{bad}: {line.strip()[:100]}")
    return found


def test_the_detector_flags_a_sentence_and_passes_code_and_terms():
    assert english_words("weights of sequence 1, head 0 =", 2, "ja")  # the old print string
    assert english_words("┃ rows 2 and 3 the same in all three: True", 2, "ja")
    for fine in (
        "│ print(table(rows))  # any code line",
        "np.where(mask, scores, -np.inf) =",  # names of the lesson's code
        "softmax と PyTorch、True / False、(B, H, T, S)、float32、12 MiB",
        "attnlab lesson 2 --plots DIR で PNG に保存します",
        "float16: value cannot be converted to type c10::Half without overflow",
    ):
        assert not english_words(fine, 2, "ja"), fine
    assert "keepdims" in known_words(2, "ja") and "cat" in known_words(4, "ja")  # code, data
    assert "sequence" not in known_words(2, "ja")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("number", source.lessons())
def test_a_lesson_run_in_japanese_or_chinese_shows_no_english_sentence(number, lang):
    if number in LOCALIZED_ELSEWHERE:
        pytest.xfail(LOCALIZED_ELSEWHERE[number])
    text, _ = lesson_run(number, lang)
    found = english_words(text, number, lang)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("number", source.lessons())
def test_every_printed_string_translation_is_used_and_keeps_its_fields(number, lang):
    table = comments.strings(number, lang)
    if number in LOCALIZED_ELSEWHERE and not table:
        pytest.skip(LOCALIZED_ELSEWHERE[number])
    bodies = {body for cell in source.cells(number) for *_, body, _ in comments.literals(cell.code)}
    assert table, f"lesson {number} has no strings.{lang}.json"
    for english, words in table.items():
        assert english in bodies, f"stale: {english!r}"  # a literal of the lesson's code
        assert sorted(re.findall(r"\{[^{}]*\}", words)) == sorted(
            re.findall(r"\{[^{}]*\}", english)
        ), english
        assert words != english and not english_words(words, number, lang), words
