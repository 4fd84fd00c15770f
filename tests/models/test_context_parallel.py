"""A GPT step split across 2 processes by sequence (context parallelism) equals one process on
whole sequences: the loss, and every parameter's gradient, for each kind of position."""

from __future__ import annotations

import itertools

import pytest
import torch

from attnlab.models import GPT, GPTConfig
from helpers import free_port, run_ranks, token_batch, write_corpus

CASES = list(itertools.product(("rope", "learned", "sinusoidal"), ("contiguous", "zigzag")))


def _cfg(pos: str) -> GPTConfig:
    return GPTConfig(
        vocab_size=13, block_size=16, n_layer=2, n_head=4, n_kv_head=2, n_embd=16, pos=pos
    )


def _batch():
    return token_batch(13, 3, 16, seed=5)


def _worker(rank: int, world: int, port: int, out: str) -> None:
    import torch.distributed as dist

    from attnlab.nn.ring import ContextParallel

    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    results = []
    for pos, layout in CASES:
        cp = ContextParallel.build(world, layout)
        torch.manual_seed(0)
        model = GPT(_cfg(pos)).double()
        x, y = _batch()
        _, loss = model(cp.shard(x), cp.shard(y), context_parallel=cp)
        loss.backward()
        grads = {}
        for n, p in model.named_parameters():  # what DDP does: average over the ranks
            dist.all_reduce(p.grad)
            grads[n] = p.grad / world
        total = loss.detach().clone()
        dist.all_reduce(total)
        results.append((total / world, grads))
    if rank == 0:
        torch.save(results, out)
    dist.destroy_process_group()


def test_a_context_parallel_step_equals_one_process_on_whole_sequences(tmp_path):
    out = str(tmp_path / "cp.pt")
    run_ranks(_worker, (2, free_port(), out), 2)
    results = torch.load(out, weights_only=True)
    for (pos, layout), (loss, grads) in zip(CASES, results, strict=True):
        torch.manual_seed(0)
        model = GPT(_cfg(pos)).double()
        x, y = _batch()
        _, want = model(x, y)
        want.backward()
        assert abs(float(loss) - float(want.detach())) < 1e-12, (pos, layout)
        for n, p in model.named_parameters():
            torch.testing.assert_close(
                grads[n], p.grad, rtol=1e-9, atol=1e-12, msg=(pos, layout, n)
            )


def test_context_parallel_refuses_what_it_cannot_do():
    from attnlab.nn.ring import shard_positions

    with pytest.raises(ValueError, match="multiple of 4"):
        shard_positions(10, 2, 0, "zigzag")


def _train_worker(rank: int, port: int, run_dir: str) -> None:
    import os

    os.environ.update(WORLD_SIZE="2", RANK=str(rank), LOCAL_RANK=str(rank))
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))

    from attnlab.train.lm import LMRunConfig, train_lm
    from attnlab.train.trainer import leave_distributed

    cfg = LMRunConfig(
        out=run_dir,
        model={"block_size": 16, "n_layer": 1, "n_head": 2, "n_embd": 16, "pos": "rope"},
        train={
            "max_iters": 3,
            "batch_size": 2,
            "eval_interval": 2,
            "eval_iters": 1,
            "context_parallel": 2,
        },
        progress=False,
    )
    result = train_lm(cfg)
    torch.save(result.model.state_dict(), f"{run_dir}/../cp_rank{rank}.pt")
    del result  # a DDP reducer freed after its group is gone could wait forever for a peer
    leave_distributed()


def test_train_gpt_with_context_parallel_keeps_ranks_identical(tmp_path):
    run = tmp_path / "run"
    run_ranks(_train_worker, (free_port(), str(run)), 2)
    a, b = (torch.load(tmp_path / f"cp_rank{r}.pt", weights_only=True) for r in (0, 1))
    saved = torch.load(run / "checkpoint.pt", weights_only=True)["model"]
    torch.manual_seed(1337)  # the run's seed: the weights it started from
    start = GPT(GPTConfig(vocab_size=saved["wte.weight"].shape[0], block_size=16, n_layer=1,
                          n_head=2, n_embd=16, pos="rope")).state_dict()  # fmt: skip
    for name in saved:
        assert torch.equal(a[name], b[name]) and torch.equal(a[name], saved[name]), name
    assert any(not torch.equal(start[n], saved[n]) for n in saved)


def test_context_parallel_without_enough_processes_is_one_line(tmp_path, capsys):
    from attnlab.cli import main

    corpus = write_corpus(tmp_path)
    args = ["train", "gpt", "--out", str(tmp_path / "r"), "--corpus", str(corpus)]
    assert main([*args, "--context-parallel", "2"]) == 2
    assert "--context-parallel 2 must divide the number of processes (1)" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
