"""What a teacher and a learner see of the grader's seed and language: the same seed prepares the
same cases (so a report can be reproduced), another seed other random ones, and each language's
hints are that language's own text."""

import re

import numpy as np
import pytest

from attnlab.grade import EXERCISES, grader
from attnlab.grade.mistakes import MISTAKES, hint

KANA = re.compile(r"[\u3040-\u30ff]")
HAN = re.compile(r"[\u4e00-\u9fff]")


def _fresh(exercise: str, seed: int):
    """The prepared cases, computed anew (not the per-process cache's copy)."""
    return grader._prepared.__wrapped__(exercise, seed)


def _inputs(cases) -> list[tuple]:
    """Each case's inputs: its name, scalars (a length, a width) and arrays."""
    return [(c.name, repr(c.scalars), repr(c.kwargs), c.arrays) for c in cases]


def _same(a: list[tuple], b: list[tuple]) -> bool:
    return len(a) == len(b) and all(
        x[:3] == y[:3]
        and x[3].keys() == y[3].keys()
        and all(np.array_equal(x[3][k], y[3][k], equal_nan=True) for k in x[3])
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_the_same_seed_prepares_the_same_cases_and_another_seed_other_ones(exercise):
    one, again, other = _fresh(exercise, 5), _fresh(exercise, 5), _fresh(exercise, 6)
    for part in ("cases", "twins"):  # the random cases and their twins: drawn from the seed
        assert _same(_inputs(getattr(one, part)), _inputs(getattr(again, part))), part
        if getattr(one, part):  # (an exercise whose inputs are sizes has no twins)
            assert not _same(_inputs(getattr(one, part)), _inputs(getattr(other, part))), part
    for a, b in zip(one.expected, again.expected, strict=True):  # the right answers too
        assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))
    assert one.twin_of == again.twin_of


@pytest.mark.parametrize("level", [1, 2, 3])
def test_each_languages_hints_are_that_languages_text(level):
    for mistake in MISTAKES:
        en, ja, zh = (hint(mistake, lang, level) for lang in ("en", "ja", "zh"))
        assert en and ja and zh, mistake
        assert not KANA.search(en) and not HAN.search(en), (mistake, en)
        assert KANA.search(ja), (mistake, ja)
        assert HAN.search(zh) and not KANA.search(zh), (mistake, zh)
    assert hint("no_such_mistake", "ja", level) == ""


def test_a_report_carries_the_hints_in_the_language_asked_for():
    source = (
        "import numpy as np\n"
        "def softmax_rows(x):\n"
        "    e = np.exp(x)\n"
        "    return e / e.sum(axis=1, keepdims=True)\n"
    )
    reports = {
        lang: grader.grade_source(source, "softmax_rows", seed=0, lang=lang, isolation="process")
        for lang in ("en", "ja", "zh")
    }
    assert {tuple(r.mistakes) for r in reports.values()} == {("unstable_softmax",)}
    for lang, r in reports.items():
        assert r.hints == {"unstable_softmax": hint("unstable_softmax", lang)}, lang


def test_hint_levels_say_the_concept_then_where_then_the_fix_in_the_language_asked():
    from attnlab.grade.mistakes import STEPS

    for mistake, m in MISTAKES.items():
        concept, where = STEPS[m.step]
        for lang in ("en", "ja", "zh"):
            assert hint(mistake, lang, 1) == concept(lang), (mistake, lang)
            space = " " if lang == "en" else ""  # ja/zh: no space after 。 (review)
            two = f"{concept(lang)}{space}{where(lang)}"
            assert hint(mistake, lang, 2) == two, (mistake, lang)
            assert hint(mistake, lang, 3) == m.fix(lang), (mistake, lang)
        assert hint(mistake) == m.fix.en  # English at level 3 unless asked otherwise
        assert len({hint(mistake, "en", k) for k in (1, 2, 3)}) == 3, mistake
