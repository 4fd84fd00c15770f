import json
import pickle

import numpy as np
import pytest
import torch

from attnlab.cli import main
from attnlab.train import (
    CheckpointError,
    TrainConfig,
    Trainer,
    load_checkpoint,
    lr_at,
    probes,
    save_checkpoint,
)
from attnlab.train.lm import LMRunConfig, load_run, train_lm

SMALL = {"block_size": 16, "n_layer": 1, "n_head": 2, "n_embd": 16}


def _cfg(out, **train):
    base = {
        "max_iters": 30,
        "batch_size": 4,
        "eval_interval": 10,
        "eval_iters": 2,
        "warmup_iters": 5,
        "log_interval": 5,
    }
    return LMRunConfig(out=str(out), model=SMALL, train={**base, **train}, progress=False)


def test_lr_schedule():
    cfg = TrainConfig(max_iters=100, lr=1.0, min_lr=0.1, warmup_iters=10)
    assert lr_at(0, cfg) < lr_at(9, cfg) < 1.0
    assert lr_at(10, cfg) == pytest.approx(1.0)
    assert lr_at(55, cfg) == pytest.approx(0.55)
    assert lr_at(100, cfg) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="unknown TrainConfig field"):
        TrainConfig.from_dict({"iters": 3})
    timed = TrainConfig(
        max_iters=10**9, lr=1.0, min_lr=0.1, warmup_iters=10, max_seconds=60, decay_by_time=True
    )
    assert lr_at(500, timed, time_fraction=0.0) == pytest.approx(1.0)
    assert lr_at(500, timed, time_fraction=0.5) == pytest.approx(0.55)
    assert lr_at(500, timed, time_fraction=1.3) == pytest.approx(0.1)  # past the budget: min_lr


def test_resume_gives_the_same_losses_as_an_uninterrupted_run(tmp_path):
    straight = train_lm(_cfg(tmp_path / "a"))
    first = train_lm(_cfg(tmp_path / "b"), should_stop=lambda it: it == 15)
    assert first.interrupted and first.iters == 15
    assert load_checkpoint(tmp_path / "b" / "checkpoint.pt")["iter"] == 15
    second = train_lm(LMRunConfig(out=str(tmp_path / "b"), resume=True, progress=False))
    assert first.train_losses + second.train_losses == pytest.approx(
        straight.train_losses, abs=1e-6
    )
    assert second.evals[-1]["val_loss"] == pytest.approx(straight.evals[-1]["val_loss"], abs=1e-6)
    log = [json.loads(x) for x in (tmp_path / "b" / "log.jsonl").read_text().splitlines()]
    assert log[-1]["done"] and (tmp_path / "b" / "loss.png").stat().st_size > 1000
    # the attention snapshots: every evaluation, dropped past the checkpoint on resume
    assert probes.steps(tmp_path / "a") == [0, 10, 20, 30]
    assert probes.steps(tmp_path / "b") == [0, 10, 15, 20, 30]
    later = zip(probes.load(tmp_path / "a")[2:], probes.load(tmp_path / "b")[3:], strict=True)
    for (sa, a), (sb, b) in later:
        assert sa == sb and (a["ids"] == b["ids"]).all()
        np.testing.assert_allclose(a["weights"], b["weights"], atol=2e-3)


def test_run_directory_and_weights_only_loading(tmp_path):
    train_lm(_cfg(tmp_path, max_iters=5))
    assert {p.name for p in tmp_path.iterdir()} >= {
        "config.json",
        "tokenizer.json",
        "checkpoint.pt",
        "log.jsonl",
        "loss.png",
    }
    _, tok, cfg = load_run(tmp_path)
    assert cfg["model"]["n_embd"] == 16 and tok.vocab_size == cfg["model"]["vocab_size"]
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=True)  # plain data only
    assert state["iter"] == 5
    (step, snap), *_ = probes.load(tmp_path)[::-1]  # the last snapshot: the trained model's
    model, _, _ = load_run(tmp_path)
    ids = torch.from_numpy(snap["ids"])[None]
    _, _, ws = model(ids, need_weights=True)
    assert step == 5 and snap["weights"].shape == (1, 2, 16, 16)
    np.testing.assert_allclose(snap["weights"], torch.stack([w[0] for w in ws]).detach(), atol=1e-3)
    np.testing.assert_allclose(snap["weights"].sum(-1), 1, atol=1e-2)


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")  # the evil file is a plain pickle
def test_truncated_and_foreign_checkpoints_are_clear_errors(tmp_path):
    good = tmp_path / "good.pt"
    save_checkpoint({"attnlab": 1, "model": {"w": torch.ones(3)}}, good)
    bad = tmp_path / "bad.pt"
    bad.write_bytes(good.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="damaged or not an attnlab checkpoint") as e:
        load_checkpoint(bad)
    assert "weights_only" not in str(e.value)  # never advise loading untrusted code

    class Evil:
        def __reduce__(self):
            return (exec, ("raise SystemExit('code ran')",))

    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps({"model": Evil()}))
    with pytest.raises(CheckpointError):
        load_checkpoint(evil)  # weights-only: the code never runs
    with pytest.raises(CheckpointError, match="no checkpoint there"):
        load_checkpoint(tmp_path / "missing.pt")


def test_flipped_bits_in_a_checkpoint_are_caught_by_its_checksum(tmp_path):
    path = tmp_path / "checkpoint.pt"
    weights = torch.arange(4096, dtype=torch.float32)
    save_checkpoint({"attnlab": 1, "model": {"w": weights}, "iter": 3}, path)
    assert torch.equal(load_checkpoint(path)["model"]["w"], weights)
    raw = bytearray(path.read_bytes())
    at = raw.find(weights.numpy().tobytes()[4000:4016])  # inside the tensor's stored bytes
    assert at > 0
    raw[at + 3] ^= 0x10  # one bit of one float
    path.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match=r"damaged .*checksum") as e:
        load_checkpoint(path)
    assert str(path) in str(e.value) and "weights_only" not in str(e.value)


def test_a_crash_mid_write_keeps_the_old_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "checkpoint.pt"
    save_checkpoint({"attnlab": 1, "model": {}, "iter": 1}, path)

    def broken_save(obj, f):
        with open(f, "wb") as fh:
            fh.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint({"attnlab": 1, "model": {}, "iter": 2}, path)
    monkeypatch.undo()
    assert load_checkpoint(path)["iter"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"]  # no temp file left behind


def test_sigint_checkpoints_and_stops(tmp_path):
    import signal

    cfg = TrainConfig(max_iters=50, batch_size=2, eval_interval=100, eval_iters=1)
    calls = []

    def stop(it):
        calls.append(it)
        if it == 3:
            signal.raise_signal(signal.SIGINT)  # what Ctrl-C sends
        return False

    from attnlab.data import CharTokenizer, TokenData
    from attnlab.models import GPT, GPTConfig
    from attnlab.train.lm import LMTask

    text = "hello world " * 50
    tok = CharTokenizer.from_text(text)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, **SMALL))
    res = Trainer(cfg, tmp_path, progress=False, should_stop=stop).fit(
        model, LMTask(TokenData.from_text(text, tok), 16)
    )
    # the signal lands during the check after step 3: the step in flight finishes, then it stops
    assert res.interrupted and res.iters == 4
    assert load_checkpoint(tmp_path / "checkpoint.pt")["iter"] == 4


def test_cli_train_sample_viz(tmp_path, capsys):
    out = tmp_path / "run"
    args = [
        "train",
        "gpt",
        "--out",
        str(out),
        "--max-iters",
        "6",
        "--block-size",
        "16",
        "--n-layer",
        "1",
        "--n-embd",
        "16",
        "--n-head",
        "2",
        "--set",
        "eval_interval=3",
        "--set",
        "eval_iters=1",
        "--set",
        "pos=rope",
    ]
    assert main(args) == 0
    assert "val loss" in capsys.readouterr().out
    assert (
        main(
            ["sample", str(out), "--prompt", "def ", "--max-new-tokens", "20", "--temperature", "0"]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert text.startswith("def ") and len(text) >= 24
    assert main(["sample", str(out), "--prompt", "\u2603"]) == 2
    assert "'\u2603'" in capsys.readouterr().err
    assert (
        main(["viz", "gpt", str(out), "--text", "for x in y", "--out", str(tmp_path / "a.png")])
        == 0
    )
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["viz", "gpt", str(out), "--text", "x", "--layer", "5"]) == 2
    assert main(["train", "gpt", "--out", str(out), "--set", "n_layers=2"]) == 2
    assert main(["sample", str(tmp_path / "nope")]) == 2


class _TinyTask:
    """A linear regression task: fast steps; with a ``clock``, each step takes ``step`` seconds
    of it and each evaluation ``eval_seconds``."""

    def __init__(self, clock=None, step: float = 0.0, eval_seconds: float = 0.0):
        self.clock, self.step, self.eval_seconds = clock, step, eval_seconds

    def train_batch(self, gen, batch_size, device):
        if self.clock is not None:
            self.clock.now += self.step
        x = torch.randn(batch_size, 4, generator=gen)
        return x, x.sum(-1, keepdim=True)

    def loss(self, model, batch):
        return torch.nn.functional.mse_loss(model(batch[0]), batch[1])

    def tokens(self, batch):
        return batch[0].shape[0]

    def evaluate(self, model, gen, device, iters):
        if self.clock is not None:
            self.clock.now += self.eval_seconds
        return {"val_loss": 1.0}


class _Clock:
    """A clock that moves only when the task says time passed."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_logged_lr_is_the_one_applied_under_a_time_budget(tmp_path):
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    applied = []
    handle = register_optimizer_step_pre_hook(
        lambda opt, args, kwargs: applied.append(opt.param_groups[0]["lr"])
    )
    cfg = TrainConfig(
        max_iters=10**9, lr=1.0, min_lr=0.1, warmup_iters=3, max_seconds=0.4,
        decay_by_time=True, eval_interval=10**9, log_interval=1, batch_size=4,
    )  # fmt: skip
    clock = _Clock()
    try:
        Trainer(cfg, tmp_path, progress=False, clock=clock).fit(
            torch.nn.Linear(4, 1), _TinyTask(clock, step=0.01)
        )
    finally:
        handle.remove()
    logged = [r["lr"] for r in map(json.loads, (tmp_path / "log.jsonl").read_text().splitlines())
              if r.get("kind") == "step"]  # fmt: skip
    assert len(logged) == len(applied) == 40  # 0.4 s of 0.01 s steps
    assert logged == applied
    assert applied[-1] == pytest.approx(lr_at(39, cfg, time_fraction=0.39 / 0.4))
    assert applied[-1] < 0.5 * applied[3]  # and it really decayed over the time budget


def test_the_time_budget_counts_training_not_evaluation():
    cfg = TrainConfig(
        max_iters=10**9, max_seconds=0.3, eval_interval=10, warmup_iters=0, batch_size=4
    )
    clock = _Clock()
    task = _TinyTask(clock, step=0.01, eval_seconds=0.5)
    res = Trainer(cfg, None, progress=False, clock=clock).fit(torch.nn.Linear(4, 1), task)
    # 30 steps of 0.01 s fill the budget; the 3 evaluations (iters 0, 10, 20) and the final one
    # took 2 s of the clock between them and counted for nothing
    assert res.iters == 30
    assert res.seconds == pytest.approx(0.3)
    assert clock.now - 100.0 == pytest.approx(0.3 + 4 * 0.5)
    assert res.tokens_per_s == pytest.approx(30 * 4 / 0.3)


def test_ctrl_c_prints_the_exact_command_that_resumes_the_run(tmp_path, capsys):
    import shlex
    import signal

    from torch.optim.optimizer import register_optimizer_step_pre_hook

    out = tmp_path / "my run"  # not the default folder, and a space to quote
    steps = []

    def ctrl_c_at_step_3(opt, args, kwargs):
        steps.append(1)
        if len(steps) == 3:
            signal.raise_signal(signal.SIGINT)  # what Ctrl-C sends, mid-step

    small = ["--block-size", "16", "--n-layer", "1", "--n-embd", "16", "--n-head", "2"]
    handle = register_optimizer_step_pre_hook(ctrl_c_at_step_3)
    try:
        code = main(["train", "gpt", "--out", str(out), "--max-iters", "8", *small])
    finally:
        handle.remove()
    assert code == 130
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("interrupted: iter 3 (Ctrl-C or SIGTERM),")
    assert len(lines[0]) <= 80, lines[0]  # the numbers fit a terminal; the folder is next
    assert lines[1].endswith(f" tokens/s; run in {out}")
    lines = lines[1:]
    assert lines[1] == f"resume with: attnlab train gpt --out {shlex.quote(str(out))} --resume"
    command = shlex.split(lines[1].removeprefix("resume with: "))
    assert main(command[1:]) == 0  # the printed command, as given, finishes this very run
    assert capsys.readouterr().out.startswith("done: iter 8 (max_iters 8 reached),")
    assert load_checkpoint(out / "checkpoint.pt")["iter"] == 8


def test_train_help_shows_the_defaults_and_seq2seq_says_how_long_it_will_take(capsys):
    from attnlab.commands.train import _seq2seq_plan

    for args in (["train", "gpt", "--help"], ["train", "seq2seq", "--help"]):
        assert main(args) == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "(default tiny: tiny 1000 iterations, nanogpt-cpu 2000 iterations" in text
    assert "training steps (default the preset's; tiny: 1000)" in text
    assert "training steps (default 3000, about 3.5 minutes on 2 CPU cores)" in text
    assert _seq2seq_plan({}, {}, "runs/d").startswith(
        "training 3000 iterations into runs/d, about 3.5 minutes on 2 CPU cores"
    )
    capped = _seq2seq_plan({}, {"max_iters": 3000, "max_seconds": 30}, "d")
    assert capped.startswith("training up to 3000 iterations or 30 s into d, about 30 seconds")
    assert "about" not in _seq2seq_plan({"hidden": 8}, {}, "d")  # another model: no guess


def test_a_resumed_run_gets_its_own_time_budget_and_every_stop_says_why(tmp_path):
    cfg = TrainConfig(max_iters=25, max_seconds=0.1, eval_interval=10**9, warmup_iters=0,
                      batch_size=4)  # fmt: skip
    clock = _Clock()
    first = Trainer(cfg, tmp_path, progress=False, clock=clock).fit(
        torch.nn.Linear(4, 1), _TinyTask(clock, step=0.01)
    )
    assert first.iters == 10 and first.stop_reason.startswith("time cap: 0.1 s")
    again = Trainer(cfg, tmp_path, progress=False, clock=clock).fit(
        torch.nn.Linear(4, 1), _TinyTask(clock, step=0.01), resume=True
    )
    # its own 0.1 s: ten more steps (the spent budget of the first call would allow none)
    assert again.iters == 20 and again.stop_reason.startswith("time cap")
    assert again.seconds == pytest.approx(0.2)  # the run's total still counts both calls
    last = Trainer(cfg, tmp_path, progress=False, clock=clock).fit(
        torch.nn.Linear(4, 1), _TinyTask(clock, step=0.001), resume=True
    )
    assert last.iters == 25 and last.stop_reason == "max_iters 25 reached"
    done = Trainer(cfg, tmp_path, progress=False, clock=clock).fit(
        torch.nn.Linear(4, 1), _TinyTask(clock), resume=True
    )
    assert done.iters == 25 and done.stop_reason.startswith("already at max_iters 25")
    ends = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [e["reason"] for e in ends if e["kind"] == "end"][-1] == done.stop_reason


class _Recorder:
    """A hook that writes down what the trainer told it, in order."""

    def __init__(self):
        self.events = []

    def on_start(self, loop):
        self.events.append(("start", loop.start))

    def on_step(self, loop, loss, record):
        self.events.append(("step", loop.it, record is not None))

    def on_eval(self, loop, ev):
        self.events.append(("eval", ev["iter"]))

    def on_end(self, loop, final):
        self.events.append(("end", final["iter"], loop.result.stop_reason))

    def close(self):
        self.events.append(("close",))


def test_side_effects_are_hooks_that_run_on_rank_0_only(tmp_path, monkeypatch):
    from attnlab.train import trainer as trainer_mod

    cfg = TrainConfig(max_iters=4, eval_interval=2, log_interval=3, batch_size=4)
    rec = _Recorder()
    Trainer(cfg, tmp_path / "r0", progress=False, hooks=[rec]).fit(
        torch.nn.Linear(4, 1), _TinyTask()
    )
    steps = [("step", i, i in (0, 3)) for i in range(4)]  # logged: every 3rd and the last
    assert rec.events == [("start", 0), ("eval", 0), *steps[:2], ("eval", 2), *steps[2:],
                          ("end", 4, "max_iters 4 reached"), ("close",)]  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "r0").iterdir()) == [
        "checkpoint.pt", "log.jsonl", "loss.png"
    ]  # fmt: skip
    # another rank trains the same steps and writes nothing, calls no hook
    monkeypatch.setattr(trainer_mod, "init_distributed", lambda d: trainer_mod.Distributed(1))
    other = _Recorder()
    res = Trainer(cfg, tmp_path / "r1", progress=False, hooks=[other]).fit(
        torch.nn.Linear(4, 1), _TinyTask()
    )
    assert res.iters == 4 and other.events == [] and not (tmp_path / "r1").exists()


def test_one_weight_decay_rule_for_every_model():
    from attnlab.models import GPT, GPTConfig, Seq2Seq, Seq2SeqConfig
    from attnlab.train.trainer import param_groups

    gpt = GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, n_embd=8))
    s2s = Seq2Seq(Seq2SeqConfig(src_vocab=9, tgt_vocab=7, hidden=8, emb=4))
    for model in (gpt, s2s):
        groups = param_groups(model, 0.1)
        decayed = {id(p) for p in groups[0]["params"]}
        assert groups[0]["weight_decay"] == 0.1 and groups[1]["weight_decay"] == 0.0
        for name, mod in model.named_modules():  # the rule, read from the modules' kinds
            for pname, p in mod.named_parameters(recurse=False):
                is_norm = isinstance(mod, torch.nn.LayerNorm)
                expected = not is_norm and "bias" not in pname
                assert (id(p) in decayed) == expected, f"{name}.{pname}"
        total = {id(p) for p in model.parameters()}
        assert decayed | {id(p) for p in groups[1]["params"]} == total  # each one, once


def test_the_trainer_decays_weights_and_leaves_biases_alone():
    class _ZeroGrad(_TinyTask):
        def loss(self, model, batch):
            return sum(p.sum() for p in model.parameters()) * 0.0  # zero gradients

    lin = torch.nn.Linear(4, 3)
    w0, b0 = lin.weight.detach().clone(), lin.bias.detach().clone()
    cfg = TrainConfig(max_iters=1, lr=0.5, warmup_iters=0, weight_decay=0.2, batch_size=2,
                      eval_interval=10**9, grad_clip=0)  # fmt: skip
    Trainer(cfg, None, progress=False).fit(lin, _ZeroGrad())
    assert torch.allclose(lin.weight, w0 * (1 - lr_at(0, cfg) * 0.2))  # AdamW's decoupled decay
    assert torch.equal(lin.bias, b0)


def test_tensorboard_log_holds_the_logged_losses(tmp_path):
    pytest.importorskip("tensorboard", reason="tensorboard is not installed (attnlab[tensorboard])")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    cfg = TrainConfig(max_iters=6, eval_interval=3, log_interval=2, batch_size=4, tensorboard=True)
    Trainer(cfg, tmp_path, progress=False).fit(torch.nn.Linear(4, 1), _TinyTask())
    logged = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    acc = EventAccumulator(str(tmp_path / "tensorboard"))
    acc.Reload()
    got = [(e.step, e.value) for e in acc.Scalars("train/loss")]
    want = [(r["iter"], r["loss"]) for r in logged if r["kind"] == "step"]
    assert [s for s, _ in got] == [s for s, _ in want] == [0, 2, 4, 5]
    assert np.allclose([v for _, v in got], [v for _, v in want], rtol=1e-5)
    evals = [(e.step, e.value) for e in acc.Scalars("eval/val_loss")]
    assert evals == [(0, 1.0), (3, 1.0), (6, 1.0)]


def test_without_a_bar_a_long_run_says_early_how_long_it_has_left(tmp_path, capsys):
    cfg = TrainConfig(max_iters=100, eval_interval=10**9, batch_size=4)
    clock = _Clock()
    Trainer(cfg, tmp_path / "a", progress=False, clock=clock).fit(
        torch.nn.Linear(4, 1), _TinyTask(clock, step=1.0)
    )
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "training: about 1.6 min left (94 more iterations at 1.00 s each, evaluation not counted)"
    ]
    capped = TrainConfig(max_iters=100, eval_interval=10**9, batch_size=4, max_seconds=40)
    Trainer(capped, tmp_path / "b", progress=False, clock=clock).fit(
        torch.nn.Linear(4, 1), _TinyTask(clock, step=1.0)
    )
    assert "about 34 s left" in capsys.readouterr().err  # the budget ends it first
    Trainer(cfg, tmp_path / "c", progress=False, clock=clock).fit(
        torch.nn.Linear(4, 1), _TinyTask(clock, step=0.01)
    )
    assert capsys.readouterr().err == ""  # a second to go: nothing to say
