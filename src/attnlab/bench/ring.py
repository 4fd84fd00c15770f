"""``attnlab bench --ring N``: ring attention across N processes against one process.

Each rank runs in its own process (gloo on the CPU), holds its shard of a causal sequence and
times the forward pass (median of repeats). Reported per rank: time, the part of it spent
computing its own blocks (the rest is waiting for blocks to arrive), peak extra memory (the
growth of the process's peak RSS over its inputs) and bytes sent; per layout the balance
(busiest / idlest rank). Each call's compute is part of that call's time, so the median
compute is never above the median time. The one-process rows run the same blockwise code on
the whole sequence, and torch's fused SDPA for reference.
"""

from __future__ import annotations

import socket
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from ..tables import text_table
from .measure import status_kib, timed


@dataclass
class RingRow:
    what: str  # "ring zigzag", "one process (blockwise)", ...
    T: int
    rank: int | None
    time_s: float
    peak_mib: float
    sent_mib: float
    compute_s: float = 0.0  # ring ranks: time on their own blocks (the rest is waiting)


def _peak_mib() -> float:
    return status_kib("VmHWM") / 1024


def _inputs(T: int, heads: int, dim: int):
    g = torch.Generator().manual_seed(0)
    return [torch.randn(1, heads, T, dim, generator=g) for _ in range(3)]


def _time(fn, repeats: int) -> float:
    fn()  # warm up
    return statistics.median(timed(fn, repeats))


def _time_and_compute(fn, repeats: int) -> tuple[float, float]:
    """Median wall time and median compute time (``_Ring.compute_seconds`` during the call)
    of ``repeats`` calls after a warm-up. Each call's compute is within its wall time, so the
    medians keep that order."""
    from ..nn import ring

    fn()
    walls, computes = [], []
    for _ in range(repeats):
        before = ring._Ring.compute_seconds
        walls += timed(fn, 1)
        computes.append(ring._Ring.compute_seconds - before)
    return statistics.median(walls), statistics.median(computes)


def _rank_worker(rank, world, port, T, heads, dim, layout, repeats, out_dir) -> None:
    import torch.distributed as dist

    from ..nn import ring

    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    q, k, v = (ring.shard_sequence(x, world, rank, layout=layout) for x in _inputs(T, heads, dim))
    base = _peak_mib()
    ring._Ring.sent_bytes = 0
    with torch.no_grad():
        attend = lambda: ring.ring_attention(q, k, v, is_causal=True, layout=layout)  # noqa: E731
        t, compute = _time_and_compute(attend, repeats)
    sent = ring._Ring.sent_bytes / (repeats + 1) / 2**20
    row = RingRow(f"ring {layout}", T, rank, t, _peak_mib() - base, sent, compute)
    torch.save(row.__dict__, f"{out_dir}/{layout}-{rank}.pt")
    dist.destroy_process_group()


def _one_process(T: int, heads: int, dim: int, repeats: int, out_dir: str, kind: str) -> None:
    import torch.nn.functional as F

    from ..nn.ring import _block

    torch.set_num_threads(1)
    q, k, v = _inputs(T, heads, dim)
    pos = torch.arange(T)
    base = _peak_mib()
    with torch.no_grad():
        if kind == "blockwise":
            t = _time(lambda: _block(q, k, v, pos, pos, True, dim**-0.5), repeats)
        else:
            t = _time(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), repeats)
    row = RingRow(f"one process ({kind})", T, None, t, _peak_mib() - base, 0.0)
    torch.save(row.__dict__, f"{out_dir}/one-{kind}.pt")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PARTS = ("one process (blockwise)", "one process (torch-sdpa)", "ring contiguous", "ring zigzag")


def run(
    world: int,
    T: int,
    heads: int = 1,
    dim: int = 64,
    repeats: int = 3,
    progress: Callable[[str], None] | None = None,
) -> list[RingRow]:
    """Measure both layouts across ``world`` processes and one process, each in fresh
    processes; ``progress(line)`` hears of each of the four parts as it starts."""
    import torch.multiprocessing as mp

    from ..nn.ring import shard_positions

    shard_positions(T, world, 0, "zigzag")  # refuse lengths the layouts cannot split, up front
    ctx = mp.get_context("spawn")
    say = progress or (lambda line: None)
    with tempfile.TemporaryDirectory() as tmp:
        for i, kind in enumerate(("blockwise", "torch-sdpa")):
            say(f"T={T}: {PARTS[i]} [{i + 1}/4]")
            p = ctx.Process(target=_one_process, args=(T, heads, dim, repeats, tmp, kind))
            p.start()
            p.join()
        for i, layout in enumerate(("contiguous", "zigzag"), start=3):
            say(f"T={T}: ring {layout}, {world} processes [{i}/4]")
            args = (world, _free_port(), T, heads, dim, layout, repeats, tmp)
            mp.spawn(_rank_worker, args=args, nprocs=world, join=True)
        return [RingRow(**torch.load(f, weights_only=True)) for f in sorted(Path(tmp).glob("*.pt"))]


def table(rows: list[RingRow], world: int) -> str:
    rows = sorted(rows, key=lambda r: (r.rank is not None, r.what, r.rank or 0))
    ring_row = [r.rank is not None for r in rows]
    body = [
        [
            r.what,
            r.T,
            "" if not is_ring else r.rank,
            f"{r.time_s:.3g}",  # significant digits: a small case's compute is under 0.5 ms
            f"{r.compute_s:.3g}" if is_ring else "",
            f"{r.peak_mib:.0f}",
            f"{r.sent_mib:.1f}" if is_ring else "",
        ]
        for r, is_ring in zip(rows, ring_row, strict=True)
    ]
    head = ["what", "T", "rank", "time s", "compute s", "peak MiB", "sent MiB/rank"]
    note = (
        "time: median wall time of a forward pass; compute: the part of it a rank spent on "
        "its own blocks (the rest is waiting for blocks to arrive)"
    )
    lines = [text_table(head, body), note]
    for layout in ("contiguous", "zigzag"):
        work = [r.compute_s for r in rows if r.what == f"ring {layout}"]
        if work and min(work) > 0:
            lines.append(
                f"{layout}: compute of the busiest / idlest rank {max(work) / min(work):.2f}x "
                f"over {world} ranks"
            )
    return "\n".join(lines)
