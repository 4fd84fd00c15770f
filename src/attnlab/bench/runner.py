"""``attnlab bench``: time and peak memory of attention against the sequence length.

Each method runs in its own process (``probe``), all lengths in ascending order; this module
gathers the rows, measures the machine's practical matmul roof at the start, and renders a table,
JSON or a log-log plot.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass

import numpy as np

from ..errors import UserError
from ..tables import text_table
from .measure import timed
from .methods import METHODS


@dataclass(frozen=True)
class BenchConfig:
    """What ``attnlab bench`` measures: lengths T, methods, heads, head width, dtype,
    causality, timed repeats, and the optional plot or JSON output."""

    lengths: tuple[int, ...] = (1000, 2000, 4000, 8000)
    methods: tuple[str, ...] = ("naive", "tiled", "torch")
    heads: int = 8
    dim: int = 64
    dtype: str = "float32"
    causal: bool = False
    repeats: int = 3
    plot: str | None = None
    json: bool = False


@dataclass
class Row:
    """One (method, T) measurement: median time, growth per doubling, GFLOP/s and its share
    of the matmul roof, peak extra memory (NumPy's traced allocations or the resident set's
    growth, the larger), time relative to torch, and a note when skipped or failed."""

    method: str
    T: int
    time_s: float | None  # median
    growth: float | None  # time ratio per doubling of T, from the previous length
    gflops: float | None
    roof_pct: float | None
    peak_mib: float | None
    vs_torch: float | None  # time / torch's time at the same T (same direction: fwd or bwd)
    note: str = ""


def matmul_roof(dtype: np.dtype, n: int = 1536, repeats: int = 5) -> float:
    """Practical peak: median GFLOP/s of an n x n matmul in this process (all BLAS threads)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)).astype(dtype), rng.standard_normal((n, n)).astype(dtype)
    a @ b
    times = timed(lambda: a @ b, repeats)
    return 2 * n**3 / statistics.median(times) / 1e9


def attention_flops(T: int, H: int, D: int, causal: bool) -> float:
    """4 * B * H * T^2 * D (two matmuls of 2 * T^2 * D each), halved when causal; B = 1."""
    return 4 * H * T * T * D / (2 if causal else 1)


def available_bytes() -> int:
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        return int(info["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return 8 * 2**30


def _probe(method: str, lengths: list[int], cfg: BenchConfig) -> dict[int, dict]:
    """Measure ``method`` at every length in one fresh process (see ``probe``)."""
    cmd = [
        sys.executable,
        "-m",
        "attnlab.bench.probe",
        method,
        str(cfg.heads),
        str(cfg.dim),
        cfg.dtype,
        "1" if cfg.causal else "0",
        str(cfg.repeats),
        *map(str, lengths),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True)
    got = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            got[d["T"]] = d
    if out.returncode != 0:
        err = out.stderr.strip().splitlines()
        for T in lengths:
            got.setdefault(T, {"error": err[-1] if err else f"exit code {out.returncode}"})
    return got


def run(cfg: BenchConfig, progress: bool = True) -> tuple[list[Row], float]:
    """Measure every (method, T); returns the rows and the matmul roof in GFLOP/s."""
    from tqdm import tqdm

    for m in cfg.methods:
        if m not in METHODS:
            raise UserError(f"unknown method {m!r}; choose from {', '.join(METHODS)}")
    dtype = np.dtype(cfg.dtype)
    roof = matmul_roof(dtype)
    budget = available_bytes() * 0.6
    results: dict[tuple[str, int], Row] = {}
    for m in tqdm(cfg.methods, desc="attnlab bench", disable=not progress, unit="method"):
        meth = METHODS[m]
        fits = []
        for T in cfg.lengths:
            need = (
                meth.score_copies * cfg.heads * T * T * dtype.itemsize
                + 4 * cfg.heads * T * cfg.dim * dtype.itemsize
            )
            if need > budget:
                note = f"skipped: needs ~{need / 2**30:.1f} GiB, {budget / 2**30:.1f} GiB free"
                results[m, T] = Row(m, T, None, None, None, None, None, None, note)
            else:
                fits.append(T)
        for T, res in _probe(m, fits, cfg).items() if fits else ():
            if "error" in res:
                results[m, T] = Row(
                    m, T, None, None, None, None, None, None, f"failed: {res['error']}"
                )
                continue
            t = statistics.median(res["times"])
            fl = attention_flops(T, cfg.heads, cfg.dim, cfg.causal) * meth.flops_factor
            results[m, T] = Row(
                m,
                T,
                t,
                None,
                fl / t / 1e9,
                100 * fl / t / 1e9 / roof,
                res["peak_extra_bytes"] / 2**20,
                None,
            )
    rows = [results[m, T] for T in cfg.lengths for m in cfg.methods if (m, T) in results]
    _fill_ratios(rows)
    return rows, roof


def _fill_ratios(rows: list[Row]) -> None:
    by = {(r.method, r.T): r for r in rows}
    for r in rows:
        if r.time_s is None:
            continue
        prev = [x for x in rows if x.method == r.method and x.T < r.T and x.time_s is not None]
        if prev:
            p = max(prev, key=lambda x: x.T)
            r.growth = (r.time_s / p.time_s) ** (1 / math.log2(r.T / p.T))
        other = "torch-bwd" if r.method.endswith("-bwd") else "torch"
        t = by.get((other, r.T))
        if t is not None and t.time_s:
            r.vs_torch = r.time_s / t.time_s


def table(rows: list[Row], roof: float, cfg: BenchConfig) -> str:
    head = ["method", "T", "time", "x/doubling", "GFLOP/s", "% roof", "peak MiB", "vs torch", ""]
    body = []
    for r in rows:

        def f(x, spec):
            return "" if x is None else format(x, spec)

        body.append(
            [
                r.method,
                str(r.T),
                f(r.time_s, ".4f") + ("s" if r.time_s is not None else ""),
                f(r.growth, ".2f"),
                f(r.gflops, ".1f"),
                f(r.roof_pct, ".0f"),
                f(r.peak_mib, ".1f"),
                f(r.vs_torch, ".2f"),
                r.note,
            ]
        )
    causal = "causal" if cfg.causal else "not causal"
    title = (
        f"heads {cfg.heads}, d {cfg.dim}, {cfg.dtype}, {causal}, median of {cfg.repeats}; "
        f"matmul roof {roof:.1f} GFLOP/s"
    )
    return title + "\n" + text_table(head, body, rule=False)


def to_json(rows: list[Row], roof: float, cfg: BenchConfig) -> str:
    return json.dumps(
        {"config": asdict(cfg), "roof_gflops": roof, "rows": [asdict(r) for r in rows]}, indent=2
    )


def plot(rows: list[Row], cfg: BenchConfig, path: str) -> None:
    from ..viz.heatmap import plt, save

    fig, ax = plt.subplots(figsize=(6, 4))
    for m in cfg.methods:
        pts = [(r.T, r.time_s) for r in rows if r.method == m and r.time_s is not None]
        if pts:
            ax.loglog(*zip(*pts, strict=True), marker="o", label=m)
    timed = [r for r in rows if r.time_s is not None]
    if timed:
        T0 = min(r.T for r in timed)
        t0 = max(r.time_s for r in timed if r.T == T0)
        Ts = sorted({r.T for r in timed})
        ax.loglog(Ts, [t0 * (T / T0) ** 2 for T in Ts], "k--", lw=1, label="∝ T² (guide)")
    ax.set_xlabel("sequence length T")
    ax.set_ylabel("time (s)")
    ax.set_title(
        f"attention, {cfg.heads} heads, d={cfg.dim}, {cfg.dtype}"
        + (", causal" if cfg.causal else "")
    )
    ax.legend()
    fig.tight_layout()
    save(fig, path)
