import datetime as dt
import random

from attnlab.data.dates import (
    CASES,
    FORMATS,
    INPUT_CHARS,
    DateSplits,
    Vocab,
    examples,
    ordinal,
    render,
)


def test_generator_is_deterministic_and_splits_are_disjoint():
    a, b = DateSplits.make(0), DateSplits.make(0)
    assert a.test == b.test and examples(a.test[:50], 3) == examples(b.test[:50], 3)
    assert examples(a.test[:50], 3) != examples(a.test[:50], 4)
    assert (
        not set(a.train) & set(a.test)
        and not set(a.train) & set(a.val)
        and not set(a.val) & set(a.test)
    )
    assert len(a.test) == 2000 and DateSplits.make(1).test != a.test


def test_surface_forms_and_targets():
    d = dt.date(2021, 3, 3)
    forms = {name: f(d) for name, f in FORMATS.items()}
    assert forms["d month yyyy"] == "3 March 2021"
    assert forms["month dth, yyyy"] == "March 3rd, 2021"
    assert forms["mm/dd/yy"] == "03/03/21"
    assert forms["weekday d mon yyyy"] == "Wednesday 3 Mar 2021"
    assert forms["the dth of month yyyy"] == "the 3rd of March 2021"
    assert forms["d.m.yyyy"] == "3.3.2021" and forms["yyyy年m月d日"] == "2021年3月3日"
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 111)] == [
        "1st",
        "2nd",
        "3rd",
        "4th",
        "11th",
        "12th",
        "13th",
        "21st",
        "22nd",
        "111th",
    ]
    rng = random.Random(0)
    vocab = Vocab(INPUT_CHARS)
    for d in DateSplits.make(0).train[:500]:
        vocab.encode(render(d, rng))  # every form, in every case, is inside the fixed vocabulary
        for case in CASES.values():
            for f in FORMATS.values():
                vocab.encode(case(f(d)))
    assert all(
        len(y) == 10 and y[4] == y[7] == "-" for _, y in examples(DateSplits.make(0).test[:100], 0)
    )
