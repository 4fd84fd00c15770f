"""Check names in ja/zh read in the language's own word order where a phrase needs it."""

import pytest

from attnlab.grade.words import check_name


@pytest.mark.parametrize(
    "lang, shown",
    [
        ("en", "fixed scores near +800"),
        ("ja", "固定 スコアが約 +800"),
        ("zh", "固定 分数约为 +800"),
    ],
)
def test_scores_near_a_number_is_one_phrase(lang, shown):
    # word by word, ja would read 「スコア 付近 +800」: 付近 has to follow the number
    assert check_name("fixed scores near +800", lang) == shown
    assert "付近" not in check_name("fixed scores near +800", "ja")


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_an_untouched_starter_is_one_line_of_80_columns(lang, tmp_path):
    from attnlab.grade import check, write_starter
    from attnlab.tables import display_width

    shown = str(check(write_starter("self_attention", tmp_path), seed=0, lang=lang))
    line = next(ln for ln in shown.splitlines() if "NotImplementedError" in ln)
    assert display_width(line) <= 80, line
