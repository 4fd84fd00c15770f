"""``attnlab bench``: time and memory of attention against the sequence length."""

from __future__ import annotations

from ..bench.methods import METHODS
from ._args import (
    bounded_int,
    check_outputs,
    examples,
    int_list,
    name_list,
    png_path,
    positive_int,
    progress_wanted,
)

NAME = "bench"
RING_LENGTHS = (4096,)  # --ring's default: about a minute on 2 busy cores, process starts included
RING_HEADS = 1


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="time and memory of attention against sequence length (naive, tiled, torch)",
        description="Lesson 1's exercise 3 as a tool: for each length T and method, the median "
        "time, growth per doubling of T, GFLOP/s (4*H*T^2*d, halved when causal), its share of "
        "this machine's measured matmul GFLOP/s, peak extra memory (each measurement in its own "
        f"process) and the time relative to torch. Methods: {', '.join(METHODS)}.",
        epilog=examples(
            "attnlab bench --causal",
            "attnlab bench --lengths 4096 --methods tiled,torch --causal --repeats 5",
            "attnlab bench --plot bench.png",
        ),
    )
    p.add_argument(
        "--lengths",
        type=int_list,
        help="comma-separated T values (default 1000,2000,4000,8000; with --ring: "
        f"{','.join(map(str, RING_LENGTHS))})",
    )
    p.add_argument(
        "--methods",
        type=name_list(METHODS),
        default=("naive", "tiled", "torch"),
        help="comma-separated (default naive,tiled,torch)",
    )
    p.add_argument(
        "--heads", type=positive_int, help=f"attention heads (default 8; with --ring: {RING_HEADS})"
    )
    p.add_argument("--dim", type=positive_int, default=64, help="head width d (default 64)")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32", help="floats")
    p.add_argument(
        "--causal",
        action="store_true",
        help="causal attention (skips half the work where possible)",
    )
    p.add_argument(
        "--repeats",
        type=positive_int,
        default=3,
        help="timed runs per measurement; the median is shown",
    )
    p.add_argument(
        "--plot", type=png_path, metavar="FILE.png", help="write a log-log plot of time vs T (PNG)"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument(
        "--ring",
        type=bounded_int(2, 64),
        metavar="N",
        help="instead: causal ring attention across N processes (both layouts) against one "
        "process, at each --lengths T (a multiple of 2N): time, compute time, peak memory and "
        "bytes sent per rank, and the balance between ranks (the defaults take about a minute "
        "on 2 cores)",
    )
    p.set_defaults(run=run)


def run(a) -> int:
    check_outputs((a.plot, "--plot", "file"))
    from .. import bench

    if a.ring is not None:
        return _ring(a)
    a.lengths = a.lengths or (1000, 2000, 4000, 8000)
    a.heads = a.heads or 8
    cfg = bench.BenchConfig(
        a.lengths, a.methods, a.heads, a.dim, a.dtype, a.causal, a.repeats, a.plot, a.json
    )
    rows, roof = bench.run(cfg, progress=not a.json and progress_wanted())
    print(bench.to_json(rows, roof, cfg) if a.json else bench.table(rows, roof, cfg))
    if a.plot:
        bench.plot(rows, cfg, a.plot)
        if not a.json:
            print(f"plot written to {a.plot}")
    return 0


def _ring(a) -> int:
    import sys

    from ..bench import ring
    from ..errors import UserError
    from ..nn.ring import shard_positions

    a.lengths, a.heads = a.lengths or RING_LENGTHS, a.heads or RING_HEADS
    for T in a.lengths:  # refuse every length the layouts cannot split before measuring any
        try:
            shard_positions(T, a.ring, 0, "zigzag")
        except ValueError as e:
            raise UserError(f"--lengths {T}: {e}") from None

    def say(line: str) -> None:
        print(f"attnlab bench --ring {a.ring}: {line}", file=sys.stderr, flush=True)

    for T in a.lengths:
        rows = ring.run(a.ring, T, heads=a.heads, dim=a.dim, repeats=a.repeats, progress=say)
        print(ring.table(rows, a.ring), end="\n\n")
    return 0
