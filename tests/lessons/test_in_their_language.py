"""What a learner reads in a Japanese or Chinese run of a lesson is in that language.

Each lesson's terminal run in ja and zh (``helpers.lesson_run``: the runs tests/lessons'
other modules read, once per process) is searched for English words. The code lines (``│``)
are code, and the prose may name code: a word is fine when the lesson's own code uses it as a
name (every NAME token of every cell, keywords included), when it is a data word of the lesson
(a string in a constant such as ``WORDS = ["The", "cat", ...]``), when the language's prose
writes it in backticks, or when it is one of the terms that stay English (``STAY_ENGLISH``).
Text a model wrote or a corpus holds is data too, but computed: the lesson marks the
assignment with a comment ``# data: ...`` (lesson 6's samples, lesson 7's dates), and a string
of those values shown as Python shows a value (``repr``, in quotes) is not read
(``data_strings``). The same words outside such a quoted value are still read.
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

import numpy as np
import pytest

from attnlab.grade import check
from attnlab.grade.exercises import EXERCISES
from attnlab.grade.words import ARRAY_NAMES, MESSAGES, check_message
from attnlab.lessons import answers, comments, runner, source
from helpers import lesson_run

LANGS = ("ja", "zh")

# Terms a Japanese or Chinese text writes in English too: names of models, libraries, units and
# file formats, and the Python literals a lesson prints.
STAY_ENGLISH = {
    *("softmax", "numpy", "pytorch", "torch", "gpt", "bert", "rnn", "lstm", "gru", "sdpa"),
    *("transformer", "seq2seq", "bahdanau", "luong", "vaswani", "attnlab", "python", "jupyter"),
    *("true", "false", "none", "nan", "inf", "todo", "ok"),
    *("mib", "kib", "gib", "tib", "gflop", "gflops", "nats", "ms", "png", "cpu", "gpu", "dir"),
    *("tanh", "sin", "cos", "exp", "log", "relu", "gelu", "lse", "ln", "lr", "qkv", "sdpa"),
    *("flashattention", "flash", "kv", "mha", "gqa", "mqa", "rope", "layernorm", "dropout"),
    *("autograd", "rank", "str", "int", "float", "bool", "list", "tuple", "dict", "ndarray"),
    *("adamw", "bptt", "iso"),  # an optimiser's name, an abbreviation, a standard's name
}
# Phrases that stay English: a paper's title, a standard name, and Luong's score functions
# (lesson 4 keeps dot, general, additive and concat as the code's names, in prose too); and
# the English name a lesson gives in brackets beside its own term, for the reader to look up:
# 教師強制（teacher forcing）
PHRASES = re.compile(
    r"Attention\s+Is\s+All\s+You\s+Need|one-hot|scaled\s+dot"
    r"|[（(]\s*(?:teacher\s+forcing|exposure\s+bias)\s*[）)]"
)
# Messages PyTorch itself raises, printed as they are (the prose explains them)
QUOTED = (
    re.compile(r"value cannot be converted to type \S+ without overflow"),
    re.compile(r"view size is not compatible with input tensor's size and stride.*"),
)
COMMAND = re.compile(r"attnlab(?: [a-z]+)+(?: \d+)?|--[a-z-]+(?: [A-Z]+)?")
EXCEPTION = re.compile(r"[A-Z]\w*(Error|Exception|Warning|Interrupt)")  # Python's own names
WORD = re.compile(r"[A-Za-z0-9_]+")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
# a Python string as repr shows it, on one line
QUOTED_VALUE = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
DATA_COMMENT = re.compile(r"data(:|$)")


def data_names(number: int) -> set[str]:
    """The names lesson ``number``'s code assigns in a statement it marks ``# data: ...``."""
    names: set[str] = set()
    for cell in source.cells(number):
        rows = {
            row + 1 for row, _, _, text in comments.found(cell.code) if DATA_COMMENT.match(text)
        }
        try:
            tree = ast.parse(cell.code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AugAssign) and rows & set(
                range(node.lineno, node.end_lineno + 1)
            ):
                for target in getattr(node, "targets", None) or [node.target]:
                    for n in ast.walk(target):
                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                            names.add(n.id)
                        elif isinstance(n, ast.Subscript | ast.Attribute):
                            root = n.value
                            while isinstance(root, ast.Subscript | ast.Attribute):
                                root = root.value
                            if isinstance(root, ast.Name):
                                names.add(root.id)
    return names


def _strings(value, depth: int = 0) -> set[str]:
    if isinstance(value, str):
        return {value}
    if depth > 4:
        return set()
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list | tuple | set | frozenset):
        return set().union(set(), *(_strings(v, depth + 1) for v in value))
    return set()


def data_strings(number: int, results: dict) -> frozenset[str]:
    """The strings held by the values of ``data_names(number)`` after a run (``results``: what
    each step assigned) and by the lesson's UPPER_CASE constants."""
    names, found = data_names(number), set()
    for assigned in results.values():
        for name, value in assigned.items():
            if name in names or name.isupper():
                found |= _strings(value)
    return frozenset(found)


def without_data(text: str, data: frozenset[str]) -> str:
    """``text`` with each quoted Python string whose value is one of ``data`` blanked."""

    def blank(m: re.Match) -> str:
        try:
            value = ast.literal_eval(m.group(0))
        except (ValueError, SyntaxError):
            return m.group(0)
        return " " if value in data else m.group(0)

    return QUOTED_VALUE.sub(blank, text)


@cache
def known_words(number: int, lang: str) -> frozenset[str]:
    """The words lesson ``number`` may show in ``lang`` without translating them (lower case)."""
    words: set[str] = set(STAY_ENGLISH) | {c.id for c in source.cells(number)}  # step, exercise
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


def english_words(
    text: str,
    number: int,
    lang: str,
    also: set[str] = frozenset(),
    data: frozenset[str] = frozenset(),
) -> list[str]:
    """Each line of ``text`` (a terminal run) that shows an English word the lesson may not
    show in ``lang``, with the words; ``also``: more names it may show; ``data``: strings the
    run computed as data (``data_strings``), passed where they are shown quoted."""
    known = known_words(number, lang) | {w.lower() for w in also}
    found = []
    for line in PHRASES.sub(" ", text).splitlines():
        line = without_data(line, data)
        if line.lstrip().startswith(("│", "[plot] ")):  # a line of code; a figure's file path
            continue
        rest = COMMAND.sub(" ", line)
        for quoted in QUOTED:
            rest = quoted.sub(" ", rest)
        bad = [
            w
            for w in WORD.findall(rest)
            if len(w) > 1
            and w.isalpha()
            and w.isascii()
            and w.lower() not in known
            and not EXCEPTION.fullmatch(w)
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
        "  [plot] /tmp/plots_x/lesson2_5_unmasked.png",  # where --plots wrote a figure
        "float16: value cannot be converted to type c10::Half without overflow",
    ):
        assert not english_words(fine, 2, "ja"), fine
    assert "keepdims" in known_words(2, "ja") and "cat" in known_words(4, "ja")  # code, data
    assert "sequence" not in known_words(2, "ja")


def test_the_detector_passes_a_marked_sample_only_where_it_is_shown_as_a_value():
    sample = "The object is a string of the"  # what lesson 6's model might write
    data = frozenset({sample})
    assert {"samples", "x_text", "y_text", "SENTENCE", "PROMPT"} <= data_names(6)
    assert {"test", "pairs", "written", "alignments"} <= data_names(7)
    assert "text" not in data_names(6)  # the corpus itself is not shown, so not marked
    shown = f"T = 0.5：{sample!r}（学習用の文章にある単語 93%）"
    assert not english_words(shown, 6, "ja", data=data)
    assert english_words(shown, 6, "ja")  # unmarked, the same line is flagged
    assert english_words(f"T = 0.5：{sample}", 6, "ja", data=data)  # not quoted: prose
    assert english_words("T = 0.5：'The object is a list'", 6, "ja", data=data)  # not the data
    assert english_words(f"{sample!r} mostly invented", 6, "ja", data=data)  # the label is read
    assert data_strings(6, {1: {"samples": {0.5: sample}, "found": {"x": "y"}}}) == data


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("number", source.lessons())
def test_a_lesson_run_in_japanese_or_chinese_shows_no_english_sentence(number, lang):
    text, results = lesson_run(number, lang)
    found = english_words(text, number, lang, data=data_strings(number, results))
    assert not found, "\n".join(found)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("number", source.lessons())
def test_every_printed_string_translation_is_used_and_keeps_its_fields(number, lang):
    table = comments.strings(number, lang)
    bodies = {body for cell in source.cells(number) for *_, body, _ in comments.literals(cell.code)}
    assert table, f"lesson {number} has no strings.{lang}.json"
    for english, words in table.items():
        assert english in bodies, f"stale: {english!r}"  # a literal of the lesson's code
        assert sorted(re.findall(r"\{[^{}]*\}", words)) == sorted(
            re.findall(r"\{[^{}]*\}", english)
        ), english
        assert words != english and not english_words(words, number, lang), words


def self_attention(X, W_Q, W_K, W_V, mask=False):  # lesson 2's exercise, keepdims forgotten
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T / np.sqrt(K.shape[1])
    if mask:
        scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1)
    return weights @ V, weights


@pytest.mark.parametrize("lang", LANGS)
def test_the_graders_lines_for_each_case_are_in_the_learners_language(lang):
    """What ``attnlab lesson 2 --exercise 1`` (and ``attnlab grade``) print per case."""
    report = check(self_attention, lang=lang)
    text = str(report)
    assert not report.passed and len(report.checks) > 10 and "missing_keepdims" in text
    assert (
        "最大絶対誤差" if lang == "ja" else "最大绝对误差"
    ) in text  # the case lines, translated
    returns = set(EXERCISES["self_attention"].returns)  # the names of what it returns
    found = english_words(text, 2, lang, also=returns)
    assert not found, "\n".join(found)
    assert "max abs error" in str(check(self_attention, lang="en"))  # English stays English


@pytest.mark.parametrize("lang", LANGS)
def test_every_check_message_pattern_leaves_no_english(lang):
    samples = [  # one message of each kind, as diagnosis.py and parity.py write them
        "output: max abs error 0.8 > tolerance 1e-10; weights: max abs error 0.3 > tolerance 1e-10",
        "weights: max abs error 0.333 > tolerance 1e-10; at [0, 2] got 0.73, expected 0.4",
        "weights has NaN/Inf at [1, 2] where the answer is finite",
        "mask differs from the expected mask at [0, 1]",
        "mask is int64, expected a bool array (np.tril(..., dtype=bool))",
        "weights has shape (3,), expected (3, 3)",
        "output: expected a numeric array, got str",
        "expected a tuple (output, weights), got tuple of 3",
        "expected one array (weights), got a tuple",
        "still running after 10 s",
        "the process died: exit code -9 (signal 9)",
        "imports 'torch', which this exercise forbids",
        "imports 'torch' at run time",
        "no function named 'self_attention'; expected self_attention(X, W_Q, W_K, W_V)",
        "raised while loading: SyntaxError",
        "raised ZeroDivisionError",
        "random T=5 d_model=6 d_k=3 masked: two calls with the same inputs gave different answers",
        "changed its input(s) X in place",
    ]
    for pattern, _ in MESSAGES:  # each pattern is tried on at least one sample
        assert any(re.search(pattern, sample) for sample in samples), pattern
    for sample in samples:
        shown = check_message(sample, lang)
        found = english_words(shown, 2, lang, also=set(EXERCISES["self_attention"].returns))
        assert shown != sample and not found, (sample, shown)


@pytest.mark.parametrize("lang", LANGS)
def test_the_returned_arrays_a_message_names_are_named_in_the_learners_language(lang):
    name = {n: words[0 if lang == "ja" else 1] for n, words in ARRAY_NAMES.items()}
    two = "output: max abs error 0.8 > tolerance 1e-10; weights: max abs error 0.3 > tolerance 1"
    shown = check_message(two, lang)  # "output:" stood in Japanese and Chinese reports
    assert shown.startswith(name["output"] + "：") and f"；{name['weights']}：" in shown
    nan = check_message("weights has NaN/Inf at [1, 2] where the answer is finite", lang)
    assert nan.startswith(name["weights"] + " ")
    assert check_message("mask differs from the expected mask at [0, 1]", lang).startswith(
        name["mask"] + " "
    )
    raised = check_message("raised ValueError: output: too few weights", lang)
    assert "ValueError: output: too few weights" in raised  # the learner's own words stay


def test_printed_strings_are_swapped_like_comments(monkeypatch):
    code = (
        'print("rows", x)  # rows\n'
        "def f():\n"
        '    """One line\n    and another."""\n'
        "print(f'{n} left', \"keep\")"
    )
    table = {
        "rows": "行",
        "{n} left": "残り {n}",
        "One line\n    and another.": "一行\n    二行目。",
    }
    monkeypatch.setattr(comments, "strings", lambda n, lang: table)
    monkeypatch.setattr(comments, "catalogue", lambda n, lang: {"rows": "行の数"})
    assert comments.translate(code, 1, "ja") == (
        'print("行", x)  # 行の数\ndef f():\n    """一行\n    二行目。"""\nprint(f\'残り {n}\', "keep")'
    )
    assert comments._load(2, "en", "strings") == {} != comments._load(2, "zh", "strings")


def test_an_exercise_verdict_in_japanese_shows_the_hint_not_the_mistakes_id():
    words = {"unchanged": answers.WORDS["unchanged"]("ja")}
    report = answers.AnswerReport("query", False, "違います", ["unchanged"], words, "ja")
    assert "unchanged" not in str(report) and words["unchanged"] in str(report)
    english = answers.AnswerReport("query", False, "differs", ["unchanged"], {"unchanged": "x"})
    assert "unchanged: x" in str(english)


LANG_KEY = re.compile(r"""["'](?:en|ja|zh)["']\s*:""")


@pytest.mark.parametrize("number", source.lessons())
def test_a_lessons_code_holds_its_words_once_and_shows_one_language(number):
    """The lesson's printed words are English literals the catalogues translate, not a dict
    with a key per language in its code (lessons 6 and 7 once had a 100-line WORDS dict in the
    setup cell, so a Japanese learner read three languages there)."""
    for cell in source.cells(number):
        assert not LANG_KEY.search(cell.code), (number, cell.kind, cell.id)
        shown = runner.code_of(cell, lang="zh", number=number)  # what a zh learner reads
        assert not re.search(r"[\u3040-\u30ff]", shown), (number, cell.id)  # no Japanese there
    assert not LANG_KEY.search('FORMS = ["d month yyyy"]') and LANG_KEY.search('{"ja": "x"}')
