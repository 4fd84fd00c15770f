"""Ring attention across 2 and 4 gloo processes equals attention on the whole sequence.

Forward and gradients (dQ, dK, dV) are compared with torch's scaled_dot_product_attention run in
one process on the unsharded sequence, in float64 under the project's parity rule, for causal
and full attention, both layouts, grouped-query heads and uneven batch and head counts.
"""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

from attnlab.nn.ring import ring_attention, shard_positions, shard_sequence, unshard_sequence
from attnlab.parity import compare
from helpers import free_port, run_ranks

CONFIGS = [  # (causal, layout, B, H, Hk, D)
    (causal, layout, B, H, Hk, D)
    for causal, layout in itertools.product((False, True), ("contiguous", "zigzag"))
    for B, H, Hk, D in ((1, 2, 2, 4), (3, 6, 2, 5))
]


def _inputs(T: int, B: int, H: int, Hk: int, D: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, H, T, D, generator=g, dtype=torch.float64)
    k = torch.randn(B, Hk, T, D, generator=g, dtype=torch.float64)
    v = torch.randn(B, Hk, T, D + 1, generator=g, dtype=torch.float64)
    dout = torch.randn(B, H, T, D + 1, generator=g, dtype=torch.float64)
    return q, k, v, dout


def _worker(rank: int, world: int, port: int, T: int, out_dir: str) -> None:
    import torch.distributed as dist

    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    results = []
    for i, (causal, layout, B, H, Hk, D) in enumerate(CONFIGS):
        q, k, v, dout = _inputs(T, B, H, Hk, D, seed=i)
        qs, ks, vs = (
            shard_sequence(x, world, rank, layout=layout).requires_grad_() for x in (q, k, v)
        )
        out = ring_attention(qs, ks, vs, is_causal=causal, layout=layout)
        (out * shard_sequence(dout, world, rank, layout=layout)).sum().backward()
        results.append([out.detach(), qs.grad, ks.grad, vs.grad])
    torch.save(results, f"{out_dir}/rank{rank}.pt")
    dist.destroy_process_group()


@pytest.mark.parametrize("world, T", [(2, 8), (4, 16)])
def test_ring_attention_equals_whole_sequence_attention(tmp_path, world, T):
    run_ranks(_worker, (world, free_port(), T, str(tmp_path)), world)
    per_rank = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in range(world)]
    for i, (causal, layout, B, H, Hk, D) in enumerate(CONFIGS):
        q, k, v, dout = (x.requires_grad_() for x in _inputs(T, B, H, Hk, D, seed=i))
        want = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=Hk != H)
        want.backward(dout)
        for j, (name, oracle) in enumerate(
            (("out", want), ("dq", q.grad), ("dk", k.grad), ("dv", v.grad))
        ):
            got = unshard_sequence([per_rank[r][i][j] for r in range(world)], layout=layout)
            p = compare(got.numpy(), oracle.detach().numpy())
            assert p.ok, (name, causal, layout, B, H, Hk, p.message)


def test_shards_and_positions():
    x = torch.arange(16.0).view(1, 1, 16, 1)
    assert shard_positions(16, 4, 1, "contiguous").tolist() == [4, 5, 6, 7]
    assert shard_positions(16, 4, 1, "zigzag").tolist() == [2, 3, 12, 13]  # one early, one late
    for layout in ("contiguous", "zigzag"):
        parts = [shard_sequence(x, 4, r, layout=layout) for r in range(4)]
        assert torch.equal(unshard_sequence(parts, layout=layout), x)
        every = torch.cat([shard_positions(16, 4, r, layout) for r in range(4)])
        assert sorted(every.tolist()) == list(range(16))  # each position on exactly one rank
    with pytest.raises(ValueError, match="multiple of 8 for the 'zigzag' layout over 4 ranks"):
        shard_positions(12, 4, 0, "zigzag")
    with pytest.raises(ValueError, match="layout must be one of"):
        shard_positions(8, 2, 0, "spiral")


def test_zigzag_balances_causal_work():
    """Causal work per rank (query-key pairs below the diagonal): contiguous grows with the rank,
    zigzag is equal on every rank."""
    T, world = 64, 4

    def work(layout: str) -> list[int]:
        return [int(sum(p + 1 for p in shard_positions(T, world, r, layout))) for r in range(world)]

    contiguous, zigzag = work("contiguous"), work("zigzag")
    assert contiguous == sorted(contiguous) and contiguous[-1] > 5 * contiguous[0]
    assert len(set(zigzag)) == 1
