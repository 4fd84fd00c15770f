import warnings

import numpy as np
import pytest

from attnlab.viz import bars, fonts, head_grid, heatmap, save


def test_heatmap_and_grid_write_png(tmp_path):
    w = np.random.default_rng(0).dirichlet(np.ones(5), size=5)
    p = save(heatmap(w, list("abcde"), list("abcde"), title="t"), tmp_path / "sub" / "h.png")
    assert p.read_bytes()[:4] == b"\x89PNG"
    g = save(head_grid(np.stack([np.stack([w, w])] * 2)), tmp_path / "g.png")
    assert g.stat().st_size > 1000
    assert save(bars([1, 2], ["x", "y"]), tmp_path / "b.png").exists()
    with pytest.raises(ValueError, match=r"2-D \(T, S\) array, got shape \(5,\)"):
        heatmap(w[0])


def test_cjk_detection():
    assert (
        fonts.needs_cjk(["a", "床"])
        and fonts.needs_cjk("ひらがな")
        and not fonts.needs_cjk(["abc", None])
    )


def test_missing_cjk_font_warns_once_with_hint(monkeypatch):
    monkeypatch.setattr(fonts, "find_cjk_font", lambda: None)
    monkeypatch.setattr(fonts, "register_packaged_font", lambda: None)
    monkeypatch.setattr(fonts, "_warned", False)
    with pytest.warns(fonts.MissingCJKFontWarning, match="fonts-noto-cjk"):
        assert fonts.use_cjk_font() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fonts.use_cjk_font() is None  # only once


def test_a_full_system_cjk_font_goes_first_then_the_packaged_one(monkeypatch):
    import matplotlib

    monkeypatch.setattr(fonts, "find_cjk_font", lambda: "Some System CJK")
    monkeypatch.setitem(matplotlib.rcParams, "font.sans-serif", ["DejaVu Sans"])
    assert fonts.use_cjk_font() == "Some System CJK"
    assert matplotlib.rcParams["font.sans-serif"] == [
        "Some System CJK",
        fonts.PACKAGED,
        "DejaVu Sans",
    ]


def test_cjk_labels_render_without_missing_glyphs(tmp_path, monkeypatch):
    monkeypatch.setattr(fonts, "find_cjk_font", lambda: None)  # a fresh machine: no system font
    assert fonts.use_cjk_font() == fonts.PACKAGED
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font" otherwise
        save(
            heatmap(
                -np.eye(5), list("床前明月光"), list("床前明月光"), title="注意の重み −1", vmin=-1
            ),
            tmp_path / "cjk.png",
        )


def test_the_packaged_font_draws_the_courses_characters():
    from matplotlib.ft2font import FT2Font

    font = FT2Font(str(fonts.packaged_font_path()))
    assert font.family_name == fonts.PACKAGED
    text = "床前明月光疑是地上霜举舉頭望注意の重み注意力机制"  # ja, zh-Hans and zh-Hant forms
    missing = [c for c in text if font.get_char_index(ord(c)) == 0]
    assert missing == []
    assert font.get_char_index(ord("\U00020000")) == 0  # a rare Extension B ideograph: not kept


def test_rendered_cjk_differs_from_tofu(tmp_path, monkeypatch):
    """The labels really are drawn: the image with 床前明月光 differs from one with empty boxes."""
    import matplotlib.pyplot as plt

    monkeypatch.setattr(fonts, "find_cjk_font", lambda: None)

    def render(text: str) -> np.ndarray:
        fig = plt.figure(figsize=(2, 1), dpi=50)
        fig.text(0.05, 0.4, text, fontsize=20, family="sans-serif")
        fig.canvas.draw()
        img = np.asarray(fig.canvas.buffer_rgba())[..., 0].copy()
        plt.close(fig)
        return img

    fonts.use_cjk_font()
    drawn = [render(c) for c in "床前明"]
    assert all((d < 128).sum() > 20 for d in drawn)  # ink on the page
    assert not np.array_equal(drawn[0], drawn[1]) and not np.array_equal(drawn[1], drawn[2])


def test_head_grid_titles_keep_the_models_layer_and_head_numbers(monkeypatch, tmp_path):
    w = np.random.default_rng(1).dirichlet(np.ones(4), size=(1, 2, 4))  # (L=1, H=2, T, S)
    fig = head_grid(w, layers=[3], heads=[1, 2])
    assert [ax.get_title() for ax in fig.axes if ax.get_title()] == [
        "layer 3 · head 1",
        "layer 3 · head 2",
    ]


def test_viz_gpt_passes_the_chosen_layer_to_the_titles(monkeypatch, tmp_path):
    from attnlab import viz
    from attnlab.cli import main
    from helpers import write_corpus

    corpus = write_corpus(tmp_path)
    run = tmp_path / "run"
    args = ["--n-layer", "2", "--n-head", "2", "--n-embd", "8", "--block-size", "8"]
    assert main(["train", "gpt", "--out", str(run), "--corpus", str(corpus), *args,
                 "--max-iters", "2", "--set", "eval_iters=1"]) == 0  # fmt: skip
    seen = {}
    real = viz.head_grid

    def spy(weights, labels, **kw):
        seen.update(kw, shape=weights.shape)
        return real(weights, labels, **kw)

    monkeypatch.setattr(viz, "head_grid", spy)
    assert main(["viz", "gpt", str(run), "--text", "abc", "--layer", "1"]) == 0
    assert seen["layers"] == [1] and seen["heads"] == [0, 1] and seen["shape"][:2] == (1, 2)


def test_compare_weights_draws_yours_and_the_expected_on_one_colour_scale():
    from attnlab.viz import compare_weights

    got = np.array([[0.8, 0.2], [0.5, 0.5]])  # its largest weight is above the expected's
    expected = np.array([[0.7, 0.3], [0.4, 0.6]])
    fig = compare_weights(got, expected)
    yours, theirs = (ax.images[0].get_clim() for ax in fig.axes[:2])
    assert yours == theirs == (0.0, 0.8)  # the same colour means the same weight


def test_a_plot_flag_wants_a_png_name(capsys):
    from attnlab.cli import main

    assert main(["grade", "hw.py", "--plot", "w.txt"]) == 2
    err = capsys.readouterr().err
    assert "expected a file name ending in .png, got 'w.txt'" in err and len(err.splitlines()) == 1


def test_the_heatmap_shows_the_weights_rows_as_queries_columns_as_keys():
    """What the learner sees: row t of the picture is query t's weights over the keys (a
    non-square matrix, so a transposed drawing cannot pass), the labels where they belong, and
    each cell's number written on that cell."""
    w = np.random.default_rng(2).dirichlet(np.ones(5), size=3)  # (T=3 queries, S=5 keys)
    fig = heatmap(w, list("abc"), list("vwxyz"), title="t")
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.images[0].get_array(), w)
    assert [t.get_text() for t in ax.get_yticklabels()] == list("abc")  # queries down
    assert [t.get_text() for t in ax.get_xticklabels()] == list("vwxyz")  # keys across
    assert (ax.get_ylabel(), ax.get_xlabel()) == ("query", "key")
    written = {
        (round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts
    }
    assert written == {(t, s): f"{w[t, s]:.2f}" for t in range(3) for s in range(5)}
    assert ax.images[0].get_clim() == (0.0, w.max())  # from zero up to the largest weight


def test_each_panel_of_the_head_grid_is_that_layer_and_heads_weights():
    w = np.random.default_rng(3).dirichlet(np.ones(4), size=(2, 3, 5))  # (L=2, H=3, T=5, S=4)
    fig = head_grid(w)
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 6
    for n, ax in enumerate(panels):  # row by row: layer 0's heads, then layer 1's
        i, h = divmod(n, 3)
        np.testing.assert_array_equal(ax.images[0].get_array(), w[i, h])
        assert ax.get_title() == f"layer {i} · head {h}"


def test_compare_weights_shows_yours_the_expected_and_their_difference_in_that_order():
    from attnlab.viz import compare_weights

    got = np.array([[0.8, 0.2, 0.0], [0.5, 0.25, 0.25]])
    expected = np.array([[0.7, 0.3, 0.0], [0.5, 0.25, 0.25]])
    yours, theirs, diff = compare_weights(got, expected).axes[:3]
    np.testing.assert_array_equal(yours.images[0].get_array(), got)
    np.testing.assert_array_equal(theirs.images[0].get_array(), expected)
    np.testing.assert_allclose(diff.images[0].get_array(), np.abs(got - expected))
    outlined = {(p.get_x() + 0.5, p.get_y() + 0.5) for p in yours.patches}
    assert outlined == {(0.0, 0.0), (1.0, 0.0)}  # (key, query) of the two wrong cells


def test_head_grid_labels_queries_and_keys_and_fits_its_largest_side():
    from attnlab.viz.heatmap import GRID_INCHES

    w = np.random.default_rng(4).dirichlet(np.ones(3), size=(1, 2, 4))  # (1, 2, T=4, S=3)
    ax = [a for a in head_grid(w, list("abcd"), list("xyz")).axes if a.images][1]
    assert [t.get_text() for t in ax.get_yticklabels()] == list("abcd")  # queries down
    assert [t.get_text() for t in ax.get_xticklabels()] == list("xyz")  # keys across
    self_w = np.full((1, 1, 3, 3), 1 / 3)
    ax = head_grid(self_w, list("abc")).axes[0]  # self-attention: the keys are the queries
    assert [t.get_text() for t in ax.get_xticklabels()] == list("abc")
    assert tuple(head_grid(self_w).get_size_inches()) == (3.0, 3.0)  # one panel: 2.4 in + margin
    wide, tall = (head_grid(np.full((L, H, 2, 2), 0.5)) for L, H in ((2, 12), (12, 2)))
    assert np.isclose(max(wide.get_size_inches()), GRID_INCHES)  # 12 heads shrink to fit
    assert np.isclose(max(tall.get_size_inches()), GRID_INCHES)  # and 12 layers
    with pytest.raises(ValueError, match=r"\(L, H, T, S\) weights, got shape \(2, 2\)"):
        head_grid(np.eye(2))


def test_the_heatmap_grows_with_the_matrix_up_to_its_largest_size():
    sizes = {
        (T, S): tuple(heatmap(np.full((T, S), 0.5), annotate=False).get_size_inches())
        for T, S in ((2, 2), (5, 8), (100, 100))
    }
    assert sizes[(2, 2)] == (3.0, 2.6)  # the smallest figure
    np.testing.assert_allclose(sizes[(5, 8)], (0.55 * 8 + 1.8, 0.5 * 5 + 1.4))  # width: keys
    assert sizes[(100, 100)] == (10.0, 8.0)  # MAX_INCHES
    assert heatmap(np.eye(2)).axes[0].images[0].get_cmap().name == "viridis"
