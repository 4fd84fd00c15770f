"""Run directories never lose work: mistaken flags, signals, kills and failed starts."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attnlab.cli import main
from attnlab.train.rundir import truncate_log
from helpers import PROSE_CORPUS, fork_main, write_corpus

SMALL = [
    "--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "16",
    "--batch-size", "4", "--set", "eval_iters=2", "--set", "warmup_iters=2",
]  # fmt: skip


@pytest.fixture
def corpus(tmp_path) -> Path:
    return write_corpus(tmp_path, PROSE_CORPUS)


def _train(out, corpus, *extra) -> int:
    return main(["train", "gpt", "--out", str(out), "--corpus", str(corpus), *SMALL, *extra])


def _digest(folder: Path) -> dict[str, str]:
    files = sorted(p for p in folder.rglob("*") if p.is_file())  # attention/ snapshots too
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def _log(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "log.jsonl").read_text().splitlines()]


def test_an_existing_run_is_never_replaced_by_mistake(tmp_path, corpus, capsys):
    run = tmp_path / "run"
    assert _train(run, corpus, "--max-iters", "6", "--eval-interval", "3") == 0
    before = _digest(run)
    capsys.readouterr()
    assert _train(run, corpus, "--max-iters", "2") == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "--force" in err and len(err.strip().splitlines()) == 1
    assert _digest(run) == before
    assert _train(run, corpus, "--max-iters", "2", "--force") == 0
    assert _log(run)[-1]["iter"] == 2  # replaced: the new run's log only


def test_failed_starts_leave_no_folder(tmp_path, corpus, capsys):
    tiny = tmp_path / "tiny.txt"
    tiny.write_text("abcdefghij", encoding="utf-8")
    for out, args, words in [
        (tmp_path / "a", ["--corpus", str(tiny)], "corpus too short"),
        (tmp_path / "b", ["--corpus", str(corpus), "--device", "cuda"], "CUDA"),
        (tmp_path / "c", ["--corpus", str(tmp_path)], "a folder, expected a UTF-8 text file"),
        (tmp_path / "d", ["--corpus", str(corpus), "--set", "pos=alibi"], "pos must be one of"),
    ]:
        assert main(["train", "gpt", "--out", str(out), *SMALL, *args]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1, err
        assert not out.exists()


def test_out_naming_a_file_is_one_line(tmp_path, corpus, capsys):
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    assert _train(afile, corpus) == 2
    assert "a file, expected a run folder" in capsys.readouterr().err
    assert afile.read_text() == "keep me"


def test_sigterm_checkpoints_and_resume_reads_as_one_run(tmp_path, corpus):
    run = tmp_path / "run"
    cmd = ["train", "gpt", "--out", str(run), "--corpus", str(corpus), *SMALL]
    cmd += ["--max-iters", "100000", "--eval-interval", "1000", "--set", "log_interval=1"]
    proc = fork_main(cmd)  # a process of its own, for the signal, forked: torch is imported
    log = run / "log.jsonl"
    deadline = time.monotonic() + 600  # only against a hang: a busy machine may be slow
    while proc.is_alive() and time.monotonic() < deadline:
        if log.exists() and log.read_text().count("\n") > 6:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGTERM)
    proc.join(timeout=60)
    assert proc.exitcode == 130
    steps = [r["iter"] for r in _log(run) if r.get("kind") == "step"]
    from attnlab.train import load_checkpoint

    ckpt = load_checkpoint(run / "checkpoint.pt")
    assert ckpt["iter"] == steps[-1] + 1 > 5  # the checkpoint is at the signal, not at iter 0
    # continue it: the log reads as one run, every step once, in order
    assert (
        main(["train", "gpt", "--out", str(run), "--resume", "--max-iters", str(ckpt["iter"] + 5)])
        == 0
    )
    steps = [r["iter"] for r in _log(run) if r.get("kind") == "step"]
    assert steps == sorted(set(steps)) and steps[-1] == ckpt["iter"] + 4


def test_sigkill_leaves_a_log_that_resume_cuts_back_and_stale_temps_are_removed(tmp_path, corpus):
    run = tmp_path / "run"
    every = ["--set", "log_interval=1"]
    assert _train(run, corpus, "--max-iters", "20", "--eval-interval", "10", *every) == 0
    ckpt_iter = 20
    # simulate a kill at iteration 27: steps past the checkpoint logged, a half-written temp file
    with open(run / "log.jsonl", "a") as f:
        for it in range(20, 28):
            f.write(json.dumps({"kind": "step", "iter": it, "loss": 1.0, "lr": 1e-3}) + "\n")
        f.write('{"kind": "step", "iter": 28, "lo')  # cut mid-line by the kill
    (run / ".checkpoint.pt.x1y2.tmp").write_bytes(b"partial")
    assert _train(run, corpus, "--resume", "--max-iters", "25", *every) == 0
    assert not list(run.glob(".*.tmp"))
    steps = [r["iter"] for r in _log(run) if r.get("kind") == "step"]
    assert steps == sorted(set(steps)) and steps[-1] == 24
    assert [
        r["iter"] for r in _log(run) if r.get("kind") == "step" and r["iter"] >= ckpt_iter
    ] == list(range(20, 25))


def test_truncate_log_keeps_evaluations_at_the_checkpoint(tmp_path):
    log = tmp_path / "log.jsonl"
    records = [
        {"iter": 0, "val_loss": 3.0},  # an eval, old style (no kind)
        {"iter": 0, "loss": 3.1, "lr": 1.0, "tokens_per_s": 5.0},
        {"iter": 5, "val_loss": 2.0},
        {"iter": 5, "loss": 2.1, "lr": 1.0, "tokens_per_s": 5.0},
        {"iter": 6, "loss": 2.0, "lr": 1.0, "tokens_per_s": 5.0},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert truncate_log(log, 5) == 2
    assert [json.loads(x) for x in log.read_text().splitlines()] == records[:3]


def test_a_relative_corpus_is_stored_absolute_and_resume_works_from_anywhere(
    tmp_path, corpus, monkeypatch
):
    monkeypatch.chdir(corpus.parent)
    assert (
        main(["train", "gpt", "--out", "run", "--corpus", corpus.name, *SMALL, "--max-iters", "3"])
        == 0
    )
    saved = json.loads((corpus.parent / "run" / "config.json").read_text())
    assert saved["corpus"] == str(corpus.resolve())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    run = str(corpus.parent / "run")
    assert main(["train", "gpt", "--out", run, "--resume", "--max-iters", "5"]) == 0


def test_resume_refuses_a_different_corpus_model_or_attention(tmp_path, corpus, capsys):
    run = tmp_path / "run"
    assert _train(run, corpus, "--max-iters", "3") == 0
    other = tmp_path / "other.txt"
    other.write_text(corpus.read_text().upper())
    capsys.readouterr()
    assert main(["train", "gpt", "--out", str(run), "--resume", "--corpus", str(other)]) == 2
    err = capsys.readouterr().err
    assert str(corpus.resolve()) in err and str(other.resolve()) in err
    assert main(["train", "gpt", "--out", str(run), "--resume", "--n-layer", "2"]) == 2
    assert "n_layer is 1, got 2" in capsys.readouterr().err
    s2s = tmp_path / "s2s"
    args = [
        "train",
        "seq2seq",
        "--out",
        str(s2s),
        "--max-iters",
        "2",
        "--hidden",
        "8",
        "--emb",
        "8",
    ]
    assert main([*args, "--set", "eval_iters=1"]) == 0
    capsys.readouterr()
    assert (
        main(["train", "seq2seq", "--out", str(s2s), "--resume", "--attention", "luong-dot"]) == 2
    )
    err = capsys.readouterr().err
    assert "'bahdanau'" in err and "'luong-dot'" in err


def test_a_checkpoint_that_does_not_match_its_config_is_one_line(tmp_path, corpus, capsys):
    run = tmp_path / "run"
    assert _train(run, corpus, "--max-iters", "3") == 0
    cfg = json.loads((run / "config.json").read_text())
    cfg["model"]["n_embd"] = 32
    (run / "config.json").write_text(json.dumps(cfg))
    capsys.readouterr()
    assert main(["train", "gpt", "--out", str(run), "--resume", "--max-iters", "5"]) == 2
    assert main(["sample", str(run), "--max-new-tokens", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("does not match its config.json" in e for e in err)


@pytest.mark.parametrize(
    "args, words",
    [
        (["--top-k", "0"], "--top-k"),
        (["--top-k", "-3"], "--top-k"),
        (["--temperature", "nan"], "--temperature"),
        (["--top-p", "1.5"], "--top-p"),
        (["--max-new-tokens", "-5"], "--max-new-tokens"),
        (["--device", "cuda"], "no CUDA device"),
    ],
)
def test_sample_flags_are_checked(tmp_path, corpus, capsys, args, words):
    run = tmp_path / "run"
    assert _train(run, corpus, "--max-iters", "2") == 0
    capsys.readouterr()
    if "cuda" in args:
        pytest.importorskip("torch")
        import torch

        if torch.cuda.is_available():
            pytest.skip("a CUDA device is present")
    assert main(["sample", str(run), *args]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_sample_on_a_seq2seq_run_says_what_to_use(tmp_path, capsys):
    run = tmp_path / "s2s"
    assert main(["train", "seq2seq", "--out", str(run), "--max-iters", "2", "--hidden", "8"]) == 0
    done, where = capsys.readouterr().out.splitlines()[-2:]
    assert done.startswith("done: iter 2 (max_iters 2 reached), val exact match ")
    assert len(done) <= 80 and where == f"run in {run}"  # the numbers fit; the folder apart
    assert main(["sample", str(run)]) == 2
    assert "attnlab translate" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, words",
    [
        (["train", "gpt", "--batch-size", "0"], "--batch-size"),
        (["train", "gpt", "--eval-interval", "0"], "--eval-interval"),
        (["train", "gpt", "--n-head", "0"], "--n-head"),
        (["train", "gpt", "--set", "seed=1.5"], "--set seed=1.5: expected int"),
        (["train", "gpt", "--set", "n_layer=abc"], "--set n_layer=abc: expected int"),
        (["train", "seq2seq", "--eval-interval", "0"], "--eval-interval"),
        (["train", "seq2seq", "--set", "n_layer=4"], "unknown setting 'n_layer'"),
        (["bench", "--repeats", "0"], "--repeats"),
        (["compare", "lm", "--budget-seconds", "0"], "--budget-seconds"),
        (["lesson", "3", "--exercise", "9"], "lesson 3 has exercises 1..2, got 9"),
        (["lesson", "1", "--export", "x", "--format", "pdf"], "--format"),
        (["lesson", "1", "--seed", "-1"], "--seed"),
    ],
)
def test_bad_input_is_one_line_naming_it(tmp_path, capsys, args, words, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    captured = capsys.readouterr()
    assert words in captured.err and len(captured.err.strip().splitlines()) == 1, captured.err
    assert captured.out == ""  # nothing printed before the error (no heading, no partial table)
    assert not (tmp_path / "runs").exists()


def test_plots_naming_a_file_is_one_line(tmp_path, capsys):
    f = tmp_path / "figs"
    f.write_text("x")
    assert main(["lesson", "1", "--plots", str(f)]) == 2
    assert "a file, expected a folder" in capsys.readouterr().err


def test_a_closed_pipe_ends_quietly():
    out = subprocess.run(
        f"{sys.executable} -m attnlab lesson 1 | head -2",
        shell=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert len(out.stdout.splitlines()) == 2
    assert "Broken pipe" not in out.stderr and "Traceback" not in out.stderr, out.stderr
