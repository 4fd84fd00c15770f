import numpy as np
import pytest
import torch

from attnlab.cli import main
from attnlab.errors import UserError
from attnlab.tables import shade_legend, text_heatmap
from attnlab.train import (
    Seq2SeqRunConfig,
    Translation,
    compare_seq2seq,
    format_comparison,
    iso_problem,
    load_seq2seq,
    probes,
    train_seq2seq,
    translate,
)


def test_run_directory_round_trip_and_translate(tmp_path, capsys):
    out = tmp_path / "run"
    res = train_seq2seq(
        Seq2SeqRunConfig(
            out=str(out),
            attention="luong-general",
            model={"hidden": 16, "emb": 8, "attn_hidden": 8},
            train={"max_iters": 6, "eval_interval": 3, "batch_size": 8},
            progress=False,
        )
    )
    assert res.iters == 6 and "exact_match" in res.evals[-1]
    loaded = load_seq2seq(out)  # the checkpoint holds exactly the trained weights
    trained = dict(res.model.named_parameters())
    for name, p in loaded.named_parameters():
        assert torch.equal(p, trained[name].detach()), name
    t = translate(loaded, "Saturday 9 May 2018")
    assert t.text == translate(res.model.eval(), "Saturday 9 May 2018").text
    assert t.weights.shape == (len(t.text), len("Saturday 9 May 2018"))
    assert len(t.char_probs) == len(t.text) and 0 < t.confidence <= 1
    code = main(["translate", str(out), "9 May 2018", "--plot", str(tmp_path / "a.png")])
    lines = capsys.readouterr().out.splitlines()
    expected = translate(loaded, "9 May 2018")
    assert lines[0] == expected.verdict() and code == (1 if expected.low_confidence else 0)
    assert lines[1].split() == list("9␣May␣2018")  # the header: one column per input character
    # the verdict, the header, one row per output char, the shade legend, the PNG's path
    assert len(lines) == 2 + len(expected.text) + 2
    assert lines[-2].strip() == shade_legend(0, 1) and str(tmp_path / "a.png") in lines[-1]
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["translate", str(out), "9 May 2018 ☃"]) == 2
    assert "'☃'" in capsys.readouterr().err
    resumed = train_seq2seq(
        Seq2SeqRunConfig(out=str(out), resume=True, train={"max_iters": 8}, progress=False)
    )
    assert resumed.iters == 8
    steps = probes.steps(out)  # the probe date's alignment at every evaluation
    assert steps == [0, 3, 6, 8]
    _, last = probes.load(out)[-1]
    final = translate(load_seq2seq(out), "Saturday 9 May 2018")
    assert "".join(map(chr, last["output"])) == final.text
    np.testing.assert_allclose(last["weights"], final.weights, atol=1e-3)


def test_answers_that_are_not_dates_are_marked():
    assert iso_problem("2018-05-09") is None
    assert "day is out of range" in iso_problem("2021-02-31")
    assert iso_problem("2007-00-00") and iso_problem("2018-5-9") and iso_problem("")
    sure = Translation("2021-02-31", None, [0.99] * 10, iso_problem("2021-02-31"))
    assert "INVALID" in sure.verdict()
    unsure = Translation("2018-05-09", None, [0.99] * 9 + [0.4], None)
    assert unsure.confidence == 0.4 and "UNSURE" in unsure.verdict()
    fine = Translation("2018-05-09", None, [0.99] * 10, None)
    assert "INVALID" not in fine.verdict() and "UNSURE" not in fine.verdict()
    with pytest.raises(UserError, match="empty"):
        translate(None, "   ")


def test_text_heatmap_stays_aligned_after_full_width_characters():
    import unicodedata

    def width(s):
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)

    text, out = "2021年3月3日", "2021-03-03"
    w = torch.full((len(out), len(text)), 1 / len(text))
    w[:, 4] = 1.0  # the column under 年 is the darkest
    lines = text_heatmap(w.numpy(), out, text, 0, 1, None).splitlines()[:-1]  # less the legend
    assert len({width(ln.rstrip()) for ln in lines}) == 1  # every row as wide as the header
    col = width(lines[0][: lines[0].index("年")])
    for ln in lines[1:]:  # the darkest shade sits exactly under 年
        prefix, rest = "", ln
        while width(prefix) < col:
            prefix, rest = prefix + rest[0], rest[1:]
        assert rest[:2] == "██", ln


def test_compare_runs_every_kind_with_length_buckets():
    rows = compare_seq2seq(
        budget_seconds=0.5, progress=False, kinds=("none", "bahdanau"), n_test=100
    )
    assert [r.attention for r in rows] == ["none", "bahdanau"]
    assert all(0 <= r.exact <= 1 and r.by_length for r in rows)
    assert "len 0-10" in format_comparison(rows)


def test_the_shade_legend_names_each_shade_with_the_weights_it_stands_for():
    from attnlab.tables import SHADES, shade_legend

    legend = shade_legend(0, 1)
    assert legend.count("<") == len(SHADES) - 2 and "█ ≥0.75" in legend and "· ≤0.00" in legend
    w = np.array([[0.0, 0.15, 0.3, 0.6, 0.95]])  # each weight gets the shade its legend names
    row = text_heatmap(w, "x", "abcde", 0, 1).splitlines()[1]
    assert row == "x " + "".join(c * 2 for c in "·░▒▓█")
    assert "░ <0.25" in legend and "▒ <0.50" in legend and "▓ <0.75" in legend
