"""Tests written against the survivors of a mutation run of viz/heatmap.py (issue 35, item 2).

Each reads what the learner sees off the figure object (no PNG decoding, so they stay fast): the
pixels' array, tick labels, axis labels, titles, cell numbers and their colour, colour scales,
bar positions, and the sizes; known numbers are the oracle.
"""

import sys

import numpy as np
import pytest
from matplotlib.figure import Figure

from attnlab.viz import bars, head_grid, heatmap, save
from attnlab.viz.heatmap import alignment, compare_weights, plot_alignment


def _ticks(labels):
    return [t.get_text() for t in labels]


def test_cell_numbers_are_black_on_bright_cells_white_on_dark_centred_size_8():
    w = np.array([[1.0, 0.6], [0.61, 0.0]])  # black strictly above 0.6 x the largest
    ax = heatmap(w).axes[0]
    colours = {(round(t.get_position()[1]), round(t.get_position()[0])): t for t in ax.texts}
    assert colours[(0, 0)].get_color() == "black" and colours[(1, 0)].get_color() == "black"
    assert colours[(0, 1)].get_color() == "white" and colours[(1, 1)].get_color() == "white"
    t = colours[(0, 0)]
    assert (t.get_ha(), t.get_va(), t.get_fontsize()) == ("center", "center", 8)


def test_annotation_default_is_up_to_12_by_12_and_can_be_forced():
    assert len(heatmap(np.full((12, 12), 0.1)).axes[0].texts) == 144
    assert len(heatmap(np.full((13, 12), 0.1)).axes[0].texts) == 0
    assert len(heatmap(np.full((12, 13), 0.1)).axes[0].texts) == 0
    assert len(heatmap(np.full((2, 2), 0.1), annotate=False).axes[0].texts) == 0
    assert len(heatmap(np.full((13, 2), 0.1), annotate=True).axes[0].texts) == 26


def test_default_ticks_are_every_index_up_to_32_then_thinned_unless_labelled():
    ax = heatmap(np.full((32, 32), 0.1), annotate=False).axes[0]
    assert _ticks(ax.get_xticklabels()) == [str(i) for i in range(32)]
    assert _ticks(ax.get_yticklabels()) == [str(i) for i in range(32)]
    ax = heatmap(np.full((33, 33), 0.1), annotate=False).axes[0]
    assert len(ax.get_xticks()) < 33 and len(ax.get_yticks()) < 33
    rows, cols = [f"q{i}" for i in range(40)], [f"k{i}" for i in range(50)]
    ax = heatmap(np.full((40, 50), 0.1), rows, cols, annotate=False).axes[0]
    assert _ticks(ax.get_yticklabels()) == rows and _ticks(ax.get_xticklabels()) == cols


def test_labels_title_colour_scale_and_colour_map_are_the_callers():
    w = np.array([[0.2, 0.3]])
    fig = heatmap(w, xlabel="input", ylabel="output", vmin=-1.0, vmax=2.0, cmap="magma")
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("input", "output", "")
    assert ax.images[0].get_clim() == (-1.0, 2.0)
    assert ax.images[0].get_cmap().name == "magma"
    assert len(fig.axes) == 2  # the heatmap and its colour bar
    assert heatmap(w, title="mine").axes[0].get_title() == "mine"


def test_a_given_axes_is_drawn_into_and_its_figure_returned():
    fig = Figure()
    ax = fig.subplots()
    assert heatmap(np.eye(3), ax=ax) is fig
    np.testing.assert_array_equal(ax.images[0].get_array(), np.eye(3))


@pytest.mark.filterwarnings("ignore:Glyph")  # the font itself is not loaded here
def test_heatmap_cjk_labels_ask_for_the_cjk_font(monkeypatch):
    calls = []
    monkeypatch.setattr(sys.modules["attnlab.viz.heatmap"], "use_cjk_font", lambda: calls.append(1))
    heatmap(np.eye(2), title="plain")
    assert calls == []
    heatmap(np.eye(2), title="注意")
    assert calls == [1]


def test_head_grid_titles_names_and_numbers_are_the_callers():
    w = np.full((2, 2, 3, 3), 0.5)
    fig = head_grid(w, title="big", row_name="L", col_name="H", layers=[4, 5], heads=[7, 9])
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["L 4 · H 7", "L 4 · H 9", "L 5 · H 7", "L 5 · H 9"]
    assert fig.axes[0].title.get_fontsize() == 8
    assert fig._suptitle.get_text() == "big"
    assert head_grid(w)._suptitle is None
    im = fig.axes[0].images[0]
    assert im.get_clim() == (0.0, 0.5) and im.get_cmap().name == "viridis"


def test_head_grid_ticks_up_to_24_then_none():
    ax = head_grid(np.full((1, 1, 24, 24), 0.1)).axes[0]
    assert _ticks(ax.get_xticklabels()) == [""] * 24 and len(ax.get_yticks()) == 24
    assert ax.xaxis.get_major_ticks()[0].label1.get_fontsize() == 6
    labels = [str(i) for i in range(24)]
    ax = head_grid(np.full((1, 1, 24, 24), 0.1), labels).axes[0]
    assert _ticks(ax.get_xticklabels()) == labels == _ticks(ax.get_yticklabels())
    for T, S in ((25, 3), (3, 25)):
        ax = head_grid(np.full((1, 1, T, S), 0.1), [str(i) for i in range(25)]).axes[0]
        assert len(ax.get_xticks()) == 0 and len(ax.get_yticks()) == 0


def test_head_grid_panels_are_2_4_inches_until_the_grid_hits_13():
    assert tuple(head_grid(np.full((2, 3, 2, 2), 0.5)).get_size_inches()) == pytest.approx(
        (2.4 * 3 + 0.6, 2.4 * 2 + 0.6)
    )
    panel = (13.0 - 0.6) / 8
    assert tuple(head_grid(np.full((1, 8, 2, 2), 0.5)).get_size_inches()) == pytest.approx(
        (panel * 8 + 0.6, panel + 0.6)
    )


def test_bars_one_series_centred_on_its_labels_without_legend():
    fig = bars([1.0, 3.0, 2.0], ["a", "b", "c"], title="t", ylabel="y")
    assert tuple(fig.get_size_inches()) == pytest.approx((0.8 * 3 + 2, 3.2))
    ax = fig.axes[0]
    rects = ax.patches
    assert [r.get_height() for r in rects] == [1.0, 3.0, 2.0]
    assert [r.get_x() + r.get_width() / 2 for r in rects] == pytest.approx([0, 1, 2])
    assert [r.get_width() for r in rects] == pytest.approx([0.8] * 3)
    assert _ticks(ax.get_xticklabels()) == ["a", "b", "c"]
    assert (ax.get_title(), ax.get_ylabel(), ax.get_legend()) == ("t", "y", None)
    assert tuple(bars([1.0], ["a"]).get_size_inches()) == pytest.approx((4.0, 3.2))
    wide = bars(np.ones(5), list("abcde"))
    assert tuple(wide.get_size_inches()) == pytest.approx((0.8 * 5 + 2, 3.2))


def test_bars_two_series_side_by_side_with_a_legend():
    ax = bars([], ["a", "b"], series={"raw": [1.0, 2.0], "scaled": [3.0, 4.0]}).axes[0]
    centres = [r.get_x() + r.get_width() / 2 for r in ax.patches]
    assert centres == pytest.approx([-0.2, 0.8, 0.2, 1.2])
    assert [r.get_height() for r in ax.patches] == [1.0, 2.0, 3.0, 4.0]
    assert [r.get_width() for r in ax.patches] == pytest.approx([0.4] * 4)
    assert _ticks(ax.get_legend().get_texts()) == ["raw", "scaled"]


def test_save_writes_the_png_at_the_asked_dpi(tmp_path):
    fig = Figure(figsize=(2, 1))
    png = save(fig, tmp_path / "a.png", dpi=50)
    head = png.read_bytes()
    width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    assert (width, height) == (100, 50)
    png = save(Figure(figsize=(2, 1)), tmp_path / "b.png")
    assert int.from_bytes(png.read_bytes()[16:20], "big") == 240  # default 120 dpi


def test_compare_weights_tolerance_nan_cells_title_and_scales():
    got = np.array([[0.5 + 9e-5, 0.5 - 2e-4], [None, 0.25]], dtype=float)
    expected = np.array([[0.5, 0.5], [0.75, 0.25]])
    fig = compare_weights(got, expected, title="lesson")
    yours, theirs, diff = fig.axes[:3]  # then their colour bars
    outlined = {(p.get_x() + 0.5, p.get_y() + 0.5) for p in yours.patches}
    assert outlined == {(1.0, 0.0), (0.0, 1.0)}  # 2e-4 off and the missing (NaN) cell
    assert {(p.get_x() + 0.5, p.get_y() + 0.5) for p in diff.patches} == outlined
    assert all(p.get_edgecolor()[:3] == (1.0, 0.0, 0.0) for p in theirs.patches)
    assert yours.images[0].get_array().mask[1, 0]  # a gap, not a colour
    assert (yours.get_title(), theirs.get_title(), diff.get_title()) == (
        "yours",
        "expected",
        "|difference|",
    )
    assert fig._suptitle.get_text() == "lesson"
    assert diff.images[0].get_cmap().name == "Reds" and diff.images[0].get_clim()[0] == 0.0
    assert len(yours.texts) == 4  # small: the numbers are written


def test_compare_weights_scale_reaches_below_zero():
    fig = compare_weights([[-0.5, 1.5]], [[0.0, 1.0]])
    assert fig.axes[0].images[0].get_clim() == (-0.5, 1.5) == fig.axes[1].images[0].get_clim()


def test_compare_weights_difference_scale_runs_from_white_zero_to_the_largest_difference():
    """Equal weights: the difference panel reads 0 to the tolerance (it read -0.1 to 0.1, a
    scale around zero for a value that cannot be negative); otherwise 0 to the largest."""
    same = compare_weights([[0.2, 0.8]], [[0.2, 0.8]]).axes[2].images[0]
    assert same.get_clim() == (0.0, 1e-4)
    assert same.cmap(same.norm(0.0))[:3] == pytest.approx((1.0, 0.96, 0.94), abs=0.02)  # white
    off = compare_weights([[0.1, 0.9], [None, 0.5]], [[0.4, 0.6], [0.5, 0.5]]).axes[2].images[0]
    assert off.get_clim() == pytest.approx((0.0, 0.3))  # the missing cell is a gap, not inf


@pytest.mark.parametrize("shape,numbers", [((9, 8), 0), ((8, 8), 64)])
def test_compare_weights_writes_the_numbers_up_to_64_cells(shape, numbers):
    fig = compare_weights(np.full(shape, 0.1), np.full(shape, 0.1))
    assert len(fig.axes[0].texts) == numbers and len(fig.axes[0].patches) == 0


def test_compare_weights_all_missing_answer_draws_gaps_on_a_0_to_1_scale_without_warnings():
    fig = compare_weights([[None, None]], [[np.nan, np.nan]])
    assert fig.axes[0].images[0].get_clim() == (0.0, 1.0)
    fig = compare_weights([[None]], [[0.5]])  # a learner's function that returned None
    assert fig.axes[0].images[0].get_array().mask.all()
    assert [t.get_text() for t in fig.axes[1].texts] == ["0.50"]


@pytest.mark.parametrize(
    "shape,inches", [((2, 4), (3 * 0.5 * 4 + 4, 0.5 * 2 + 2)), ((13, 7), (13.0, 8.0))]
)
def test_compare_weights_figure_size_follows_the_matrix_up_to_13_by_8(shape, inches):
    size = compare_weights(np.ones(shape), np.ones(shape)).get_size_inches()
    assert tuple(size) == pytest.approx(inches)


def test_alignment_puts_output_characters_down_and_input_across(tmp_path):
    w = np.random.default_rng(5).dirichlet(np.ones(3), size=2)  # (len(out)=2, len(inp)=3)
    ax = alignment(w, "abc", "xy", title="al").axes[0]
    np.testing.assert_array_equal(ax.images[0].get_array(), w)
    assert _ticks(ax.get_xticklabels()) == list("abc") and _ticks(ax.get_yticklabels()) == list(
        "xy"
    )
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("input", "output", "al")
    assert len(ax.texts) == 0
    p = plot_alignment(w, "abc", "xy", str(tmp_path / "a.png"))
    assert p.read_bytes()[:4] == b"\x89PNG"
