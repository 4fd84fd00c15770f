"""Tests written against the survivors of a mutation run of grade/mistakes.py (issue 35, item 2).

The table itself is built while the module is imported (``_m``, ``ENTRIES``), where mutmut's
switch cannot reach; these tests call the functions a user's report goes through: the table's
own check (run here on small made-up tables), ``versions`` and ``hint`` at every level.
"""

import pytest

from attnlab.grade import mistakes
from attnlab.grade.mistakes import MISTAKES, STEPS, Mistake, check_versions, hint, versions
from attnlab.i18n import Text

T = Text("en", "ja", "zh")


def test_a_well_formed_table_passes_the_check():
    check_versions([Mistake("a", "softmax", T, {"softmax": [{"sum_over": "all"}]})])
    check_versions(mistakes.ENTRIES)


def test_an_id_twice_is_named():
    with pytest.raises(ValueError) as err:
        check_versions([Mistake("a", "softmax", T), Mistake("a", "mask", T)])
    assert str(err.value) == "mistake 'a' is in the table twice"


def test_an_unknown_family_is_named():
    with pytest.raises(ValueError) as err:
        check_versions([Mistake("b", "softmax", T, {"sofmax": [{}]})])
    assert str(err.value) == "mistake 'b': unknown family 'sofmax'"


def test_an_unknown_keyword_is_named_with_its_family():
    bad = {"softmax": [{"sum_over": "all"}, {"sum_over": "all", "zz": 1, "aa": 2}]}
    with pytest.raises(ValueError) as err:
        check_versions([Mistake("c", "softmax", T, bad)])
    assert str(err.value) == "mistake 'c': softmax versions take no ['aa', 'zz']"


def test_versions_are_the_tables_for_that_family_in_table_order():
    for family in ("softmax", "attention", "mask", "heads"):
        want = {m.id: m.versions[family] for m in mistakes.ENTRIES if family in m.versions}
        got = versions(family)
        assert got == want and list(got) == list(want) and got
    assert versions("softmax")["softmax_global_sum"] == [
        {"sum_over": "all"},
        {"max_over": "all", "sum_over": "all"},
    ]
    assert versions("no such family") == {}


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_hint_levels_are_concept_then_concept_and_where_then_the_fix(lang):
    m = MISTAKES["softmax_global_sum"]
    concept, where = STEPS["softmax"]
    assert hint("softmax_global_sum", lang, 1) == concept(lang)
    space = " " if lang == "en" else ""  # no space after 。
    assert hint("softmax_global_sum", lang, 2) == f"{concept(lang)}{space}{where(lang)}"
    assert hint("softmax_global_sum", lang, 3) == m.fix(lang) == hint("softmax_global_sum", lang)
    assert hint("softmax_global_sum", lang, 4) == m.fix(lang)
    assert hint("no_such_mistake", lang, 1) == ""


def test_hint_defaults_to_english_and_the_fix():
    assert hint("softmax_global_sum") == MISTAKES["softmax_global_sum"].fix("en")
    assert hint("softmax_global_sum").startswith("Each row must be divided by its own sum")
