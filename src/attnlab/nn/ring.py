"""Ring attention: exact attention over a sequence split across processes (context parallelism).

Each of N ranks holds a shard of the queries, keys and values (``shard_sequence``). The key/value
shards travel around a ring of point-to-point sends; at each of the N steps a rank attends its
own queries to the block it holds, keeping the result and its log-sum-exp, and the partial
results merge exactly (the rule of ``attnlab.ref.merge_attention``). The backward pass walks the
ring again: dQ accumulates at home, dK and dV travel with their block and arrive back at its
owner. No rank ever holds more than two key/value blocks. Sends of the next block are posted
before the current block's compute, so the transfer overlaps the work where the backend allows.

Layouts: ``contiguous`` gives rank r the r-th chunk; under a causal mask the last rank then does
N times the work of the first. ``zigzag`` splits the sequence into 2N chunks and gives rank r
chunks r and 2N-1-r, one early and one late, which balances causal work.

References: Liu, Zaharia and Abbeel, "Ring Attention with Blockwise Transformers" (2023);
Rabe and Staats (2021) and FlashAttention for the blockwise online softmax.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import Tensor

LAYOUTS = ("contiguous", "zigzag")


def _chunks(T: int, world: int, layout: str) -> int:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    n = world if layout == "contiguous" else 2 * world
    if world < 1 or T % n:
        raise ValueError(
            f"sequence length {T} must be a multiple of {n} for the {layout!r} layout over "
            f"{world} ranks (pad the sequence or choose another length)"
        )
    return n


def shard_positions(T: int, world: int, rank: int, layout: str = "contiguous") -> Tensor:
    """The global positions (``(T / world,)`` int64) that ``rank`` holds."""
    n = _chunks(T, world, layout)
    size = T // n
    idx = [rank] if layout == "contiguous" else [rank, n - 1 - rank]
    return torch.cat([torch.arange(i * size, (i + 1) * size) for i in idx])


def shard_sequence(
    x: Tensor, world_size: int, rank: int, *, layout: str = "contiguous", dim: int = -2
) -> Tensor:
    """This rank's shard of ``x`` along ``dim`` (the sequence axis): ``T / world_size`` items."""
    pos = shard_positions(x.shape[dim], world_size, rank, layout).to(x.device)
    return x.index_select(dim, pos)


def unshard_sequence(parts: list[Tensor], *, layout: str = "contiguous", dim: int = -2) -> Tensor:
    """The whole sequence from every rank's shard (``parts[r]`` from rank r): the inverse."""
    world = len(parts)
    T = sum(p.shape[dim] for p in parts)
    order = torch.cat([shard_positions(T, world, r, layout) for r in range(world)])
    joined = torch.cat(parts, dim=dim)
    return joined.index_select(dim, torch.argsort(order).to(joined.device))


QUERY_CHUNK = 2048  # query rows per score tile in the forward


def _block(
    q: Tensor, k: Tensor, v: Tensor, q_pos: Tensor, k_pos: Tensor, causal: bool, scale: float
):
    """Attention of q ``(B, H, Tq, D)`` to one key block ``(B, H, Tk, D)``: (out, lse ``(B, H, Tq)``).
    Rows that may attend to nothing in the block get lse -inf and a zero output. Long query
    shards go in chunks of ``QUERY_CHUNK`` rows, so the score tile is at most QUERY_CHUNK x Tk."""
    if q.shape[-2] > QUERY_CHUNK:
        parts = [
            _block(
                q[..., i : i + QUERY_CHUNK, :],
                k,
                v,
                q_pos[i : i + QUERY_CHUNK],
                k_pos,
                causal,
                scale,
            )
            for i in range(0, q.shape[-2], QUERY_CHUNK)
        ]
        return torch.cat([o for o, _ in parts], dim=-2), torch.cat([s for _, s in parts], dim=-1)
    s = _scores(q, k, q_pos, k_pos, causal, scale)
    lse = torch.logsumexp(s, dim=-1)  # (B, H, Tq)
    p = torch.exp(s - _finite(lse)[..., None])  # 0 on dead rows
    return p @ v, lse


def _scores(q: Tensor, k: Tensor, q_pos: Tensor, k_pos: Tensor, causal: bool, scale: float):
    """Scaled scores (B, H, Tq, Tk), -inf where a key comes after its query (when causal)."""
    s = (q @ k.transpose(-2, -1)) * scale
    if causal:
        s = s.masked_fill(k_pos[None, :] > q_pos[:, None], float("-inf"))
    return s


def _finite(lse: Tensor) -> Tensor:
    """lse with the -inf of rows that saw no key replaced by 0, so exp(s - lse) gives 0 there."""
    return torch.where(torch.isinf(lse), 0.0, lse)


def _reachable(k_pos: Tensor, q_pos: Tensor, causal: bool) -> bool:
    """Whether any query may see any key of a block (causal: not all keys in the future)."""
    return not causal or bool(k_pos.min() <= q_pos.max())


def _runs(pos: Tensor) -> list[slice]:
    """The runs of consecutive positions in a shard (one for contiguous, two for zigzag)."""
    breaks = (torch.nonzero(pos[1:] - pos[:-1] != 1).flatten() + 1).tolist()
    edges = [0, *breaks, len(pos)]
    return [slice(a, b) for a, b in itertools.pairwise(edges)]


def _causal_block(q, k, v, q_pos, k_pos, scale):
    """Causal ``_block`` that skips every (query run, key run) pair wholly in the future: with
    the zigzag layout a quarter of most blocks, which is what balances the ranks' work."""
    outs, lses = [], []
    for qs in _runs(q_pos):
        out = torch.zeros(
            (*q.shape[:-2], qs.stop - qs.start, v.shape[-1]), dtype=q.dtype, device=q.device
        )
        lse = torch.full(out.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)
        for ks in _runs(k_pos):
            if _reachable(k_pos[ks], q_pos[qs], True):
                o, s = _block(
                    q[..., qs, :], k[..., ks, :], v[..., ks, :], q_pos[qs], k_pos[ks], True, scale
                )
                out, lse = _merge(out, lse, o, s)
        outs.append(out)
        lses.append(lse)
    return torch.cat(outs, dim=-2), torch.cat(lses, dim=-1)


def _merge(out: Tensor, lse: Tensor, out_b: Tensor, lse_b: Tensor) -> tuple[Tensor, Tensor]:
    new = torch.logaddexp(lse, lse_b)
    safe = _finite(new)
    w_a, w_b = torch.exp(lse - safe)[..., None], torch.exp(lse_b - safe)[..., None]
    return out * w_a + out_b * w_b, new


class _Ring:
    """Passing blocks to the next rank and receiving from the previous one."""

    sent_bytes = 0  # bytes this process has sent through rings (for attnlab bench --ring)
    compute_seconds = 0.0  # forward time spent on blocks, not waiting for them

    def __init__(self, group):
        self.group = group
        self.world = dist.get_world_size(group)
        self.rank = dist.get_rank(group)
        ranks = (
            dist.get_process_group_ranks(group) if group is not None else list(range(self.world))
        )
        self.next = ranks[(self.rank + 1) % self.world]
        self.prev = ranks[(self.rank - 1) % self.world]

    def start(self, tensors: list[Tensor]) -> tuple[list, list[Tensor]]:
        """Post the sends of ``tensors`` and the receives of their successors; returns the
        requests and the buffers that will hold the received tensors."""
        bufs = [torch.empty_like(t, memory_format=torch.contiguous_format) for t in tensors]
        _Ring.sent_bytes += sum(t.numel() * t.element_size() for t in tensors)
        reqs = [dist.isend(t.contiguous(), self.next, group=self.group) for t in tensors]
        reqs += [dist.irecv(b, self.prev, group=self.group) for b in bufs]
        return reqs, bufs

    @staticmethod
    def wait(reqs: list) -> None:
        for r in reqs:
            r.wait()


def _expand(x: Tensor, H: int) -> Tensor:
    """(B, Hk, T, D) key/value heads repeated for their query group -> (B, H, T, D)."""
    return x if x.shape[1] == H else x.repeat_interleave(H // x.shape[1], dim=1)


def _fold(dx: Tensor, Hk: int) -> Tensor:
    """Gradient (B, H, T, D) back to (B, Hk, T, D): summed over each key/value head's group."""
    B, H, T, D = dx.shape
    return dx if H == Hk else dx.view(B, Hk, H // Hk, T, D).sum(2)


class _RingAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, positions, causal, scale, group):
        ring = _Ring(group)
        H = q.shape[1]
        out = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
        lse = torch.full(q.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)
        kv = [k, v, positions]
        for step in range(ring.world):
            reqs, nxt = ring.start(kv) if step < ring.world - 1 else ([], kv)
            kb, vb, pb = kv
            if _reachable(pb, positions, causal):  # a block wholly in the future: skip
                t0 = time.perf_counter()
                ke, ve = _expand(kb, H), _expand(vb, H)
                if causal:
                    o, s = _causal_block(q, ke, ve, positions, pb, scale)
                else:
                    o, s = _block(q, ke, ve, positions, pb, False, scale)
                out, lse = _merge(out, lse, o, s)
                _Ring.compute_seconds += time.perf_counter() - t0
            ring.wait(reqs)
            kv = nxt
        ctx.save_for_backward(q, k, v, positions, out, lse)
        ctx.causal, ctx.scale, ctx.group = causal, scale, group
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, positions, out, lse = ctx.saved_tensors
        ring, H, Hk = _Ring(ctx.group), q.shape[1], k.shape[1]
        delta = (dout * out).sum(-1, keepdim=True)  # (B, H, Tq, 1)
        safe = _finite(lse)[..., None]
        dq = torch.zeros_like(q)
        travel = [k, v, positions, torch.zeros_like(k), torch.zeros_like(v)]  # + dK, dV
        for _ in range(ring.world):
            kb, vb, pb, dkb, dvb = travel
            kv_reqs, kv_next = ring.start([kb, vb, pb])  # the block moves on during the work
            if _reachable(pb, positions, ctx.causal):
                ke, ve = _expand(kb, H), _expand(vb, H)
                s = _scores(q, ke, positions, pb, ctx.causal, ctx.scale)
                p = torch.exp(s - safe)  # the final softmax, this block's columns
                dp = dout @ ve.transpose(-2, -1)
                ds = p * (dp - delta) * ctx.scale
                dq = dq + ds @ ke
                dkb = dkb + _fold(ds.transpose(-2, -1) @ q, Hk)
                dvb = dvb + _fold(p.transpose(-2, -1) @ dout, Hk)
            # its gradients follow it; after N moves block and gradients are home again
            grad_reqs, grad_next = ring.start([dkb, dvb])
            ring.wait(kv_reqs + grad_reqs)
            travel = kv_next + grad_next
        return dq, travel[3], travel[4], None, None, None, None


def ring_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    is_causal: bool = False,
    scale: float | None = None,
    group=None,
    layout: str = "contiguous",
) -> Tensor:
    """This rank's shard of exact attention over the whole sequence, across a process group.

    q ``(B, H, T/N, D)``, k and v ``(B, Hk, T/N, D)`` are this rank's shards in ``layout``
    (``shard_sequence``); Hk may divide H (grouped-query attention). Returns ``(B, H, T/N, Dv)``,
    equal to this rank's shard of ``F.scaled_dot_product_attention`` on the whole sequence, and
    differentiable (exact gradients, dK/dV travel the ring back). Needs ``torch.distributed``
    initialised (gloo on CPU, nccl on GPU); every rank of ``group`` must call it together.
    """
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError(f"q, k, v must be (B, H, T/N, D); got {tuple(q.shape)}, {tuple(k.shape)}")
    if q.shape[1] % k.shape[1]:
        raise ValueError(
            f"query heads ({q.shape[1]}) must be a multiple of key heads ({k.shape[1]})"
        )
    T = q.shape[-2] * world
    positions = shard_positions(T, world, rank, layout).to(q.device)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    return _RingAttention.apply(q, k, v, positions, is_causal, scale, group)


@dataclass
class ContextParallel:
    """What a model needs to run one rank's shard of each sequence: the ring's process group,
    the layout, and the global positions this rank holds (for position embeddings and the
    causal mask). ``build`` makes the groups: consecutive ranks share sequences."""

    group: object
    layout: str
    size: int
    rank: int

    def positions(self, T_local: int, device=None) -> Tensor:
        return shard_positions(T_local * self.size, self.size, self.rank, self.layout).to(device)

    def shard(self, x: Tensor, dim: int = -1) -> Tensor:
        return shard_sequence(x, self.size, self.rank, layout=self.layout, dim=dim)

    def attend(self, q: Tensor, k: Tensor, v: Tensor, is_causal: bool) -> Tensor:
        return ring_attention(q, k, v, is_causal=is_causal, group=self.group, layout=self.layout)

    @classmethod
    def build(cls, size: int, layout: str = "zigzag") -> ContextParallel:
        """Split the running job (every rank calls this) into groups of ``size`` consecutive
        ranks; each group shares its sequences, groups are data-parallel to each other."""
        world, rank = dist.get_world_size(), dist.get_rank()
        if size < 1 or world % size:
            raise ValueError(f"--context-parallel {size} must divide the {world} processes")
        mine = None
        for start in range(0, world, size):  # every rank creates every group, in order
            g = dist.new_group(list(range(start, start + size)))
            if start <= rank < start + size:
                mine = g
        return cls(mine, layout, size, rank % size)
