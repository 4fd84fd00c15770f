"""Data-parallel training with 2 gloo processes on the CPU."""

import faulthandler
import itertools
import json
import os
from pathlib import Path

import torch

from attnlab.models import GPT, GPTConfig
from attnlab.train.trainer import leave_distributed
from helpers import TINY_CORPUS, TINY_GPT, free_port, run_ranks, token_batch, write_corpus

CFG = GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, n_embd=16)


def _batch():
    return token_batch(11, 4, 8, seed=3)


def _ddp_worker(rank: int, port: int, out: str) -> None:
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    torch.manual_seed(0)
    model = DistributedDataParallel(GPT(CFG))
    x, y = _batch()
    half = slice(2 * rank, 2 * rank + 2)  # each process gets its half of the batch
    model(x[half], y[half])[1].backward()
    if rank == 0:
        torch.save({n: p.grad for n, p in model.module.named_parameters()}, out)
    del model  # its reducer, freed after the group is gone, could wait forever for a peer
    leave_distributed()


def _trainer_worker(rank: int, port: int, run_dir: str) -> None:
    _torchrun_env(rank, port)

    from attnlab.train.lm import LMRunConfig, train_lm

    cfg = LMRunConfig(
        out=run_dir,
        model={"block_size": 8, "n_layer": 1, "n_head": 2, "n_embd": 16},
        train={"max_iters": 4, "batch_size": 2, "eval_interval": 2, "eval_iters": 1},
        progress=False,
    )
    result = train_lm(cfg)
    # each rank saves the weights it ends with; the test compares them
    weights = {n: p.detach().clone() for n, p in result.model.state_dict().items()}
    torch.save(weights, f"{run_dir}/../rank{rank}.pt")
    del result
    leave_distributed()


def _torchrun_env(rank: int, port: int) -> None:
    os.environ.update(
        WORLD_SIZE="2",
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
    )


def _budget_worker(rank: int, port: int, out: str) -> None:
    _torchrun_env(rank, port)

    from attnlab.data import CharTokenizer, TokenData
    from attnlab.train import LMTask, TrainConfig, Trainer

    # a rank left waiting for the other fails the test (its process exits) instead of hanging it
    faulthandler.dump_traceback_later(120, exit=True)
    ticks = itertools.count(0, 1 + rank)  # rank 1's clock runs twice as fast as rank 0's
    cfg = TrainConfig(max_iters=1000, max_seconds=30, batch_size=2, eval_interval=10**6)
    data = TokenData.from_text(TINY_CORPUS, CharTokenizer.from_text(TINY_CORPUS))
    trainer = Trainer(cfg, None, progress=False, clock=lambda: float(next(ticks)))
    result = trainer.fit(GPT(CFG), LMTask(data, 8))
    Path(out, f"rank{rank}.json").write_text(json.dumps(result.iters))
    del trainer, result
    leave_distributed()


def test_ranks_whose_clocks_differ_stop_training_at_the_same_step(tmp_path):
    """A time budget under DDP: rank 1's clock reaches it first, and both ranks stop there
    (a rank that stopped alone would leave the other waiting in its next all-reduce)."""
    run_ranks(_budget_worker, (free_port(), str(tmp_path)), 2)
    iters = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert iters[0] == iters[1] < 1000


def _cli_worker(rank: int, port: int, folder: str) -> None:
    _torchrun_env(rank, port)
    import torch.distributed as dist

    from attnlab.cli import main

    faulthandler.dump_traceback_later(120, exit=True)
    args = [
        "--corpus",
        f"{folder}/corpus.txt",
        *TINY_GPT,
        "--max-iters",
        "2",
        "--out",
        f"{folder}/run",
    ]
    code = main(["train", "gpt", *args, "--eval-interval", "1000"])
    Path(folder, f"rank{rank}.json").write_text(json.dumps([code, dist.is_initialized()]))


def test_the_train_command_under_torchrun_leaves_the_process_group_on_every_rank(tmp_path):
    write_corpus(tmp_path)
    run_ranks(_cli_worker, (free_port(), str(tmp_path)), 2)
    ends = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert ends == [[0, False], [0, False]]  # trained, and no group left behind
    assert (tmp_path / "run" / "checkpoint.pt").is_file()


def test_two_process_ddp_first_step_gradients_equal_one_process_on_the_whole_batch(tmp_path):
    out = str(tmp_path / "grads.pt")
    run_ranks(_ddp_worker, (free_port(), out), 2)
    torch.manual_seed(0)
    model = GPT(CFG)
    x, y = _batch()
    model(x, y)[1].backward()
    ddp = torch.load(out, weights_only=True)
    for n, p in model.named_parameters():
        torch.testing.assert_close(ddp[n], p.grad, atol=1e-6, rtol=1e-5, msg=n)


def test_trainer_under_two_processes_writes_from_rank_0_only(tmp_path):
    run = tmp_path / "run"
    run_ranks(_trainer_worker, (free_port(), str(run)), 2)
    names = {p.name for p in run.iterdir()}
    assert {"checkpoint.pt", "log.jsonl", "config.json", "tokenizer.json"} <= names
    log = (run / "log.jsonl").read_text().splitlines()
    assert sum('"done"' in line for line in log) == 1  # one writer, not two
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in (0, 1)]
    saved = torch.load(run / "checkpoint.pt", weights_only=True)["model"]
    assert ranks[0].keys() == ranks[1].keys() == saved.keys()
    for name in saved:  # DDP kept the replicas identical, and rank 0 saved exactly them
        assert torch.equal(ranks[0][name], ranks[1][name]), name
        assert torch.equal(ranks[0][name], saved[name]), name
    config = json.loads((run / "config.json").read_text())
    torch.manual_seed(config["train"]["seed"])  # the weights training started from
    start = GPT(GPTConfig(**config["model"])).state_dict()
    assert all(start[n].shape == saved[n].shape for n in saved)
    assert any(not torch.equal(start[n], saved[n]) for n in saved)  # and training moved them


def _seq2seq_worker(rank: int, port: int, out: str) -> None:
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    from attnlab.models import Seq2Seq, Seq2SeqConfig
    from attnlab.train.seq2seq import SRC, TGT, DateTask, encode_batch

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    torch.manual_seed(0)
    model = DistributedDataParallel(
        Seq2Seq(Seq2SeqConfig(len(SRC), len(TGT), emb=8, hidden=8, attn_hidden=8))
    )
    batch = encode_batch(S2S_PAIRS[2 * rank : 2 * rank + 2])
    DateTask.loss(model, batch).backward()  # the trainer's call, on a DDP-wrapped model
    if rank == 0:
        torch.save({n: p.grad for n, p in model.module.named_parameters()}, out)
    del model
    leave_distributed()


S2S_PAIRS = [
    ("3 March 2021", "2021-03-03"),
    ("12/25/99", "1999-12-25"),
    ("9.5.2018", "2018-05-09"),
    ("1 Jan 1970", "1970-01-01"),
]


def test_seq2seq_loss_goes_through_ddp(tmp_path):
    from attnlab.models import Seq2Seq, Seq2SeqConfig
    from attnlab.train.seq2seq import SRC, TGT, DateTask, encode_batch

    out = str(tmp_path / "grads.pt")
    run_ranks(_seq2seq_worker, (free_port(), out), 2)
    torch.manual_seed(0)
    model = Seq2Seq(Seq2SeqConfig(len(SRC), len(TGT), emb=8, hidden=8, attn_hidden=8))
    halves = [encode_batch(S2S_PAIRS[:2]), encode_batch(S2S_PAIRS[2:])]
    # each rank's loss is the mean over its own tokens; DDP averages the two gradients
    (sum(DateTask.loss(model, b) for b in halves) / 2).backward()
    ddp = torch.load(out, weights_only=True)
    for n, p in model.named_parameters():
        torch.testing.assert_close(ddp[n], p.grad, atol=1e-6, rtol=1e-5, msg=n)
