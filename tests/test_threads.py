import pytest
import torch

from attnlab.cli import main
from attnlab.commands._threads import apply_threads, auto_threads


def test_auto_threads_takes_the_idle_cores_shared_among_local_ranks():
    assert auto_threads(cores=2, load=0.1) == 2  # idle: every core, as torch would
    assert auto_threads(cores=2, load=13.9) == 1  # busy: one, never zero
    assert auto_threads(cores=8, load=2.6) == 5
    assert auto_threads(cores=8, load=0.0, ranks=4) == 2  # torchrun: shared among the ranks


def test_threads_flag_sets_torch_threads_and_refuses_bad_values(capsys, monkeypatch):
    before = torch.get_num_threads()
    try:
        assert apply_threads(1) == 1 and torch.get_num_threads() == 1
        monkeypatch.setenv("LOCAL_WORLD_SIZE", "64")
        assert apply_threads("auto") == 1  # 64 local ranks: one thread each
    finally:
        torch.set_num_threads(before)
    for bad in ("0", "two"):
        assert main(["sample", "runs/x", "--threads", bad]) == 2
        err = capsys.readouterr().err
        assert "--threads" in err and f"got {bad!r}" in err and len(err.splitlines()) == 1


def test_compare_says_how_long_it_will_take_before_training(capsys, monkeypatch):
    from attnlab.train import compare

    def refuse(*args, **kwargs):
        raise KeyboardInterrupt  # stop right where training would start

    monkeypatch.setattr(compare, "compare_lm", refuse)
    assert main(["compare", "lm", "--budget-seconds", "7", "--threads", "1"]) == 130
    err = capsys.readouterr().err
    assert err.startswith("comparing 4 models, 7 s of training each, plus evaluation")
    guess = compare.estimate_lm_seconds(None, 7.0)
    assert 4 * 7 < guess < 4 * 7 + 600


@pytest.mark.parametrize("what", ["gpt", "seq2seq"])
def test_train_help_names_threads_and_the_per_invocation_budget(what, capsys):
    assert main(["train", what, "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--threads N|auto" in out and "in this invocation (a resumed run gets its own)" in out


def test_train_flags_reach_the_training_config():
    from attnlab.cli import build_parser
    from attnlab.commands.train import TRAIN_FLAGS, _flags

    on = build_parser().parse_args(["train", "gpt", "--tensorboard", "--threads", "3"])
    off = build_parser().parse_args(["train", "seq2seq"])
    assert _flags(on, TRAIN_FLAGS) == {"tensorboard": True} and on.threads == 3
    assert _flags(off, TRAIN_FLAGS) == {} and off.threads == "auto"  # a resumed run keeps its own
