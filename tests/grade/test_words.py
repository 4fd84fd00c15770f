"""Check names in ja/zh read in the language's own word order where a phrase needs it."""

import io
import sys

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


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_a_printed_report_fits_an_80_column_terminal_and_stays_whole_in_a_pipe(
    lang, tmp_path, monkeypatch
):
    """``print(check(...))``, as an exported lesson script does: the starter's FAIL line (140
    columns in English) is broken to the terminal's width; piped, each check stays one line."""
    from attnlab.grade import check, write_starter
    from attnlab.tables import display_width

    report = check(write_starter("scaled_dot_product_attention", tmp_path), seed=0, lang=lang)
    piped = str(report)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(sys, "stdout", _Terminal())
    shown = str(report)
    assert max(map(display_width, shown.splitlines())) <= 80
    assert "".join(shown.split()) == "".join(piped.split())
    if lang == "en":
        assert max(map(display_width, piped.splitlines())) > 80
