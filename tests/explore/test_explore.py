"""The explorer's data and page, checked without a browser (tests/explore/test_pages.py opens
them in one)."""

import base64
import html
import io
import itertools
import json
import re

import numpy as np
import pytest
import torch

from attnlab.cli import main
from attnlab.errors import UserError
from attnlab.explore import data, explore, font, page
from attnlab.train.lm import load_run

from .conftest import EVIL


def _data(text: str) -> dict:
    block = re.search(
        r'<script type="application/json" id="attnlab-data">(.*?)</script>', text, re.S
    )
    return json.loads(block.group(1))


def test_pack_round_trips_to_16_bits_and_keeps_only_the_causal_triangle(rng):
    w = rng.random((2, 3, 7, 7))
    w /= w.sum(-1, keepdims=True)
    causal = np.tril(w)
    for (m, is_causal), bits in itertools.product(((w, False), (causal, True)), (8, 16)):
        back = data.unpack(data.pack(m, is_causal, bits), 2, 3, 7, 7, is_causal, bits)
        np.testing.assert_allclose(back, m, atol=0.5 / (2**bits - 1))
    assert len(data.pack(causal, True)) < 0.6 * len(data.pack(w, False))


def test_a_256_token_text_on_a_6x6_model_stays_under_5_mb(rng):
    w = np.tril(rng.random((6, 6, 256, 256)))
    w /= w.sum(-1, keepdims=True)
    tokens = list("abcdefgh" * 32)
    top = [[("a", 0.5)] * 5] * 256
    view = data.View("1", tokens, tokens, w, True, top=top)
    probe = data.View("probe", tokens[:64], tokens[:64], w[:, :, :64, :64], True, step=0, bits=8)
    snaps = [probe] * data.MAX_SNAPSHOTS  # the most snapshots a page carries, 64 tokens each
    text = page.model_page(data.Page("gpt", "run", [view, *snaps]), "en")
    assert len(text.encode()) < 5 * 2**20, len(text) / 2**20


def test_data_cannot_close_its_script_block():
    text = page.render({"mode": "model", "kind": "gpt", "views": [], "evil": EVIL}, title=EVIL)
    assert text.count("</script>") == 2  # the data block's and the code's own ends, no more
    assert "<img" not in text  # nowhere in the page: escaped in the title and in the data
    assert _data(text)["evil"] == EVIL and f"<title>{html.escape(EVIL)}" in text
    assert "default-src 'none'" in text  # nothing may be fetched


def test_gpt_views_hold_the_models_weights_and_predictions(gpt_run):
    text = "ROMEO: go"
    run = data.Run(gpt_run)
    views = run.views([text]) + run.snapshots()
    model, tok, _ = load_run(gpt_run)
    with torch.no_grad():
        logits, _, ws = model(torch.tensor([tok.encode(text)]), need_weights=True)
    w = torch.stack([x[0] for x in ws]).numpy()
    v = views[0]
    np.testing.assert_allclose(v.weights, w)
    probs = logits[0, 3].softmax(-1)
    assert [p for _, p in v.top[3]] == pytest.approx(probs.topk(5).values.tolist(), abs=1e-4)
    assert [s.step for s in views[1:]] == [0, 20, 40]  # the training snapshots
    packed = v.to_json()
    np.testing.assert_allclose(
        data.unpack(packed["w"], 2, 2, len(text), len(text), True), w, atol=1 / 65535
    )


def test_seq2seq_views_are_the_alignment(date_run):
    from attnlab.train.seq2seq import load_seq2seq, translate

    run = data.Run(date_run)
    (v, *snaps) = run.views(["9 May 2018"]) + run.snapshots()
    t = translate(load_seq2seq(date_run), "9 May 2018")
    assert v.queries == list(t.text) and v.keys == list("9␣May␣2018") and not v.causal
    np.testing.assert_allclose(v.weights[0, 0], t.weights.numpy())
    assert [s.step for s in snaps] == [0, 20, 40]  # (the fixture's steps and evaluations)


def test_bad_input_is_one_line(gpt_run, tmp_path, capsys):
    for args, words in (
        (["explore", str(gpt_run), "--text", "x" * 65], "1..64"),
        (["explore", str(gpt_run), "--text", ""], "1..64"),
        (["explore", str(gpt_run), "--text", "☃"], "vocabulary"),
        (["explore", str(tmp_path), "--text", "a"], "not a run directory"),
        (["explore"], "give one of RUN_DIR, --hf MODEL_DIR or --playground"),
        (["explore", str(gpt_run), "--playground"], "give one of RUN_DIR"),
        (["explore", "--playground", "-o", str(tmp_path)], "a folder"),
    ):
        assert main(args) == 2, args
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err, (args, err)


def test_cli_writes_one_file(gpt_run, tmp_path, capsys):
    out = tmp_path / "p.html"
    assert main(["explore", str(gpt_run), "--text", "ROMEO:", "-o", str(out), "--lang", "zh"]) == 0
    assert "wrote" in capsys.readouterr().out
    d = _data(out.read_text(encoding="utf-8"))
    assert d["lang"] == "zh" and d["words"]["head_view"] == "头视图" and len(d["views"]) == 4
    assert main(["explore", "--playground", "-o", str(tmp_path / "pg.html")]) == 0
    kib = round((tmp_path / "pg.html").stat().st_size / 1024)  # a small page: KiB, not 0.0 MiB
    assert f"pg.html ({kib} KiB)" in capsys.readouterr().out and kib < 100
    assert main(["explore", str(gpt_run), "-o", str(out)]) == 0  # no --text: the probe's start
    d = _data(out.read_text(encoding="utf-8"))
    first = d["views"][0]
    assert first["step"] is None and first["queries"] == d["views"][-1]["queries"][:32]


def test_in_a_notebook_the_page_is_an_isolated_iframe(gpt_run):
    e = explore(gpt_run, "ROMEO:")
    frame = e._repr_html_()
    assert (
        frame.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts allow-downloads"' in frame
    )
    assert "<script" not in frame  # the page is inside the attribute, escaped
    assert html.unescape(re.search(r'srcdoc="(.*?)"', frame, re.S).group(1)) == e.html
    with pytest.raises(UserError):
        explore(None)


def test_a_page_carries_at_most_twelve_snapshots_first_and_last_kept(tmp_path):
    from attnlab.train import probes

    for step in range(0, 3000, 100):
        probes.save(tmp_path, step, {"ids": np.arange(3), "weights": np.eye(3)[None, None]})
    kept = [s for s, _ in data.snapshots(tmp_path)]
    assert len(kept) == data.MAX_SNAPSHOTS and kept[0] == 0 and kept[-1] == 2900
    assert kept == sorted(set(kept))


def test_translate_prints_a_legend_that_matches_its_shades(date_run, capsys):
    from attnlab.tables import SHADES, text_heatmap

    main(["translate", str(date_run), "Saturday 9 May 2018"])
    legend = capsys.readouterr().out.splitlines()[-1]
    pairs = legend.strip().split("  ")
    assert len(pairs) == len(SHADES)
    for pair in pairs:  # each shade is what the heatmap prints on its side of the bound
        char, bound = pair.split(" ")
        x = float(bound.lstrip("<≤≥")) + (-1e-9 if bound.startswith("<") else 0)
        cell = text_heatmap(np.array([[x]]), "b", "a", 0, 1).splitlines()[1][2]
        assert cell == char, pair


def _font_chars(text: str) -> str:
    """The characters the page's inlined CJK font has glyphs for ("" if it has none)."""
    from fontTools.ttLib import TTFont

    found = re.search(r"url\(data:font/otf;base64,([A-Za-z0-9+/=]+)\)", text)
    if not found:
        return ""
    cmap = TTFont(io.BytesIO(base64.b64decode(found.group(1)))).getBestCmap()
    return "".join(chr(c) for c in sorted(cmap))


def test_a_page_carries_glyphs_for_exactly_its_cjk_characters():
    """The playground in Chinese: its font holds every CJK character of its words and title
    (their own code points, none missing, none else); an English page of an ASCII model holds
    only the CJK of its words (the playground's title); a live page's font also holds the
    model's vocabulary; text without CJK gets no font."""
    zh = page.playground_page("zh")
    words = "".join(t("zh") for t in page.WORDS.values()) + "".join(page.CHARS)
    assert set(font.needed(words)) <= set(_font_chars(zh)) == set(font.needed(zh))
    assert "font-src data:" in zh and f'"{font.FAMILY}",system-ui' in zh  # first, for CJK only
    tokens = list("the cat")
    w = np.full((1, 1, 7, 7), 1 / 7)
    english = page.model_page(data.Page("gpt", "run", [data.View("1", tokens, tokens, w, True)]))
    en_words = "".join(t("en") for t in page.WORDS.values())
    assert set(_font_chars(english)) == set(font.needed(en_words + page._asset("page.js")))
    live = page.render({"mode": "model", "views": []}, glyphs="月下独酌")
    assert set("月下独酌") <= set(_font_chars(live))
    assert not set("下独酌") & set(_font_chars(english))  # (月 is in the playground's title)
    assert font.font_face("plain text, 2 × 3 → 6") == ""
