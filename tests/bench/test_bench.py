import json
import sys

import pytest

from attnlab import bench
from attnlab.cli import main
from helpers import fork_run, fork_spawn


def _forked_probes(monkeypatch) -> None:
    """The benchmark measures each method in a process of its own (``python -m
    attnlab.bench.probe``): here a fork of this one, torch already imported."""
    import subprocess

    plain = subprocess.run

    def run(cmd, *args, **kw):
        if list(cmd[:3]) == [sys.executable, "-m", "attnlab.bench.probe"]:
            return fork_run(cmd[1:])
        return plain(cmd, *args, **kw)

    monkeypatch.setattr(subprocess, "run", run)


def test_bench_json_and_plot(tmp_path, capsys, monkeypatch):
    _forked_probes(monkeypatch)
    plot = tmp_path / "b.png"
    args = [
        "bench", "--lengths", "64,128", "--heads", "2", "--dim", "16",
        "--methods", "naive,tiled,torch,tiled-bwd,torch-bwd", "--causal", "--repeats", "1",
        "--json", "--plot", str(plot),
    ]  # fmt: skip
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {(r["method"], r["T"]): r for r in report["rows"]}
    assert len(rows) == 10 and report["roof_gflops"] > 0
    for (_, T), r in rows.items():
        assert r["time_s"] > 0 and r["gflops"] > 0 and r["peak_mib"] >= 0
        assert (r["growth"] is None) == (T == 64)
    assert rows["torch", 128]["vs_torch"] == 1.0 and rows["torch-bwd", 64]["vs_torch"] == 1.0
    assert rows["tiled", 128]["vs_torch"] == pytest.approx(
        rows["tiled", 128]["time_s"] / rows["torch", 128]["time_s"]
    )
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_flops_and_growth_arithmetic():
    assert bench.attention_flops(1000, 8, 64, causal=False) == 4 * 8 * 1000**2 * 64
    assert bench.attention_flops(1000, 8, 64, causal=True) == 2 * 8 * 1000**2 * 64
    rows = [
        bench.Row("tiled", 1000, 1.0, None, 1, 1, 1, None),
        bench.Row("tiled", 4000, 16.0, None, 1, 1, 1, None),
    ]
    from attnlab.bench.runner import _fill_ratios

    _fill_ratios(rows)
    assert rows[1].growth == pytest.approx(4.0)  # 16x over two doublings


def test_sizes_that_cannot_fit_are_skipped_not_run(monkeypatch):
    monkeypatch.setattr("attnlab.bench.runner.available_bytes", lambda: 64 * 2**20)
    rows, _ = bench.run(
        bench.BenchConfig(lengths=(8192,), methods=("naive",), heads=1, dim=8, repeats=1),
        progress=False,
    )
    assert rows[0].time_s is None and rows[0].note.startswith("skipped")


@pytest.mark.parametrize(
    "args, named",
    [
        (["--methods", "nope"], "--methods"),
        (["--lengths", "a,b"], "--lengths"),
        (["--heads", "0"], "--heads"),
        (["--dim", "0"], "--dim"),
        (["--repeats", "0"], "--repeats"),
    ],
)
def test_bad_arguments_are_one_line_naming_the_flag(args, named, capsys):
    assert main(["bench", "--lengths", "8", *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and named in err and args[1] in err


def test_ring_bench_runs_and_refuses_lengths_it_cannot_split(capsys, monkeypatch):
    fork_spawn(monkeypatch)  # its processes forked, not spawned: no timing is asserted here
    assert main(["bench", "--ring", "2", "--lengths", "10", "--repeats", "1"]) == 2
    assert "--lengths 10: sequence length 10 must be a multiple of 4" in capsys.readouterr().err
    args = [
        "bench",
        "--ring",
        "2",
        "--lengths",
        "64",
        "--repeats",
        "1",
        "--heads",
        "1",
        "--dim",
        "8",
    ]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert out.count("ring zigzag") == 2 and out.count("ring contiguous") == 2
    assert "zigzag: compute of the busiest / idlest rank" in out and "one process" in out
    progress = [line for line in err.splitlines() if line.startswith("attnlab bench --ring 2:")]
    assert [line[-5:] for line in progress] == ["[1/4]", "[2/4]", "[3/4]", "[4/4]"]
    for line in out.splitlines():  # each rank's compute is part of its time
        if line.startswith("ring "):
            time_s, compute_s = map(float, line.split()[4:6])
            assert 0 < compute_s <= time_s, line


def test_the_ring_table_keeps_a_fast_ranks_compute_time_readable():
    """A small case on a fast machine computes in a fraction of a millisecond: the table shows
    its significant digits (three decimals printed 0.000, and the ratio line went missing)."""
    from attnlab.bench.ring import RingRow, table

    rows = [RingRow("ring zigzag", 64, r, 0.0021, 1.0, 0.1, c) for r, c in ((0, 3.1e-4), (1, 2e-4))]
    text = table(rows, world=2)
    assert [line.split()[4:6] for line in text.splitlines()[2:4]] == [
        ["0.0021", "0.00031"],
        ["0.0021", "0.0002"],
    ], text
    assert "zigzag: compute of the busiest / idlest rank 1.55x over 2 ranks" in text


def test_peak_memory_sees_numpy_temporaries_and_the_output():
    """tiled attention at T = 2000 once read 0.0 MiB (the resident high-water mark was already
    higher): the probe's reading must hold at least the output it returns, and the naive
    method's at least one full (H, T, T) score table, which it frees before returning."""
    import numpy as np

    from attnlab.bench.methods import METHODS
    from attnlab.bench.probe import peak_extra_bytes

    H, T, D = 2, 384, 16
    rng = np.random.default_rng(0)
    for name, floor in (("tiled", H * T * D * 4), ("naive", H * T * T * 4)):
        run = METHODS[name].prepare(T, H, D, np.dtype("float32"), False, rng)
        run()
        traced, _ = peak_extra_bytes(run)
        assert traced >= floor, (name, traced, floor)
    assert traced < 8 * H * T * T * 4  # the naive one: a few tables, not the whole process
