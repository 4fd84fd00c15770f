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
    monkeypatch.setattr(fonts, "_warned", False)
    with pytest.warns(fonts.MissingCJKFontWarning, match="fonts-noto-cjk"):
        assert fonts.use_cjk_font() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fonts.use_cjk_font() is None  # only once


@pytest.mark.skipif(
    fonts.find_cjk_font() is None, reason="no CJK font installed (apt-get install fonts-noto-cjk)"
)
def test_cjk_labels_render_without_missing_glyphs(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font" otherwise
        save(
            heatmap(np.eye(5), list("床前明月光"), list("床前明月光"), title="注意の重み"),
            tmp_path / "cjk.png",
        )
