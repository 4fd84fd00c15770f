import torch

from attnlab.cli import main
from attnlab.train.seq2seq import (
    Seq2SeqRunConfig,
    compare_seq2seq,
    format_comparison,
    load_seq2seq,
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
    a, b = load_seq2seq(out), load_seq2seq(out)
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q)
    iso, w = translate(a, "Saturday 9 May 2018")
    assert len(iso) <= 10 and w.shape == (len(iso), len("Saturday 9 May 2018"))
    assert main(["translate", str(out), "9 May 2018", "--plot", str(tmp_path / "a.png")]) == 0
    text = capsys.readouterr().out
    assert (
        "9 May 2018".replace(" ", "␣")[0] in text
        and (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"
    )
    assert main(["translate", str(out), "9 May 2018 ☃"]) == 2
    assert "'☃'" in capsys.readouterr().err
    resumed = train_seq2seq(
        Seq2SeqRunConfig(out=str(out), resume=True, train={"max_iters": 8}, progress=False)
    )
    assert resumed.iters == 8


def test_compare_runs_every_kind_with_length_buckets():
    rows = compare_seq2seq(
        budget_seconds=0.5, progress=False, kinds=("none", "bahdanau"), n_test=100
    )
    assert [r.attention for r in rows] == ["none", "bahdanau"]
    assert all(0 <= r.exact <= 1 and r.by_length for r in rows)
    assert "len 0-10" in format_comparison(rows)
