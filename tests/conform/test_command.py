"""``attnlab conform TARGET``: exit codes, formats, one-line errors; and the pytest helper."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlab.cli import main
from attnlab.conform import OPT_IN_IDS, load_target
from attnlab.conform.pytest import conformance_tests

HERE = Path(__file__).parent
BROKEN = f"{HERE}/broken.py"

# the three lines a project writes: every feature becomes one test of this module
test_kit_on_torch_sdpa = conformance_tests(F.scaled_dot_product_attention)


def test_a_correct_target_exits_0_and_prints_the_table(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: the head line on one line
    assert main(["conform", f"{BROKEN}:attention", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert f"attnlab conform {BROKEN}:attention (api torch, device cpu, seed 3" in out
    assert "gqa                  pass" in out
    assert out.rstrip().endswith("23 passed, 0 failed, 0 unsupported")


def test_the_report_fits_an_80_column_terminal_and_loses_no_word(capsys, monkeypatch):
    shown = {}
    for columns in ("80", "1000"):
        monkeypatch.setenv("COLUMNS", columns)
        assert main(["conform", f"{BROKEN}:gqa_tile"]) == 1
        shown[columns] = capsys.readouterr().out
    lines = shown["80"].splitlines()
    assert max(len(line) for line in lines) <= 80 < max(len(x) for x in shown["1000"].split("\n"))
    words = {c: [w for w in shown[c].split() if set(w) != {"-"}] for c in shown}  # no rules
    assert words["80"] == words["1000"]  # the table's last column wraps in place
    row = next(i for i, line in enumerate(lines) if line.startswith("mask_broadcast "))
    col = lines[row].index("float masks")
    assert lines[row + 1][:col].strip() == "" and lines[row + 1][col] != " "  # under its column


def test_a_failing_target_exits_1_with_json_to_a_file(tmp_path, capsys):
    out_file = tmp_path / "report.json"
    rc = main(["conform", f"{BROKEN}:gqa_tile", "--format", "json", "-o", str(out_file)])
    assert rc == 1
    said = "21 passed, 1 failed, 0 unsupported, 1 failing only through another row (see it);"
    assert said in capsys.readouterr().out
    data = json.loads(out_file.read_text())
    failed = [f for f in data["features"] if f["status"] == "fail"]
    assert [f["id"] for f in failed] == ["gqa"]
    seen = [(f["id"], f["see"]) for f in data["features"] if f["status"] == "see"]
    assert seen == [("gradients", ["gqa"])]  # its GQA case fails because gqa does
    assert failed[0]["failure"]["where"] == "rows 0-2, heads 1-2 (6 of 12 rows)"


def test_numpy_api_by_module_name(capsys):
    target = "attnlab.ref:scaled_dot_product_attention"
    assert main(["conform", target, "--api", "numpy", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["api"] == "numpy" and data["passed"] is True
    unsupported = {f["id"]: f["note"] for f in data["features"] if f["status"] == "unsupported"}
    assert unsupported == {"bfloat16": "NumPy has no bfloat16", "gradients": "needs --api torch"}


@pytest.mark.parametrize(
    "target, says",
    [
        ("nowhere/missing.py:attention", "no file 'nowhere/missing.py'"),
        (f"{BROKEN}:no_such_function", "has no attribute 'no_such_function'"),
        (f"{BROKEN}:HALF", "HALF is not callable"),
        ("attnlab_no_such_module:f", "ModuleNotFoundError"),
        ("just_a_name", "expected path/to/file.py:function or package.module:function"),
    ],
)
def test_a_target_that_cannot_be_loaded_is_one_line_exit_2(target, says, capsys):
    assert main(["conform", target]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot load target {target!r}" in err and says in err


def test_a_target_whose_import_fails_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nraise SystemExit('refusing to import')\n")
    assert main(["conform", f"{bad}:f"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "SystemExit: refusing to import" in err


def test_features_picks_rows_and_an_unknown_id_is_one_line(capsys):
    assert main(["conform", f"{BROKEN}:bottom_right", "--features", "causal,gqa"]) == 0
    out = capsys.readouterr().out
    assert "2 passed, 0 failed, 0 unsupported" in out and "causal_cross_length" not in out
    assert main(["conform", f"{BROKEN}:attention", "--features", "causal,flash"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown feature 'flash'; expected one of basic," in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_device_cuda_without_a_gpu_is_one_line(capsys):
    assert main(["conform", f"{BROKEN}:attention", "--device", "cuda"]) == 2
    err = capsys.readouterr().err
    assert (
        err == "attnlab conform: error: --device cuda: no CUDA GPU is available on this machine\n"
    )


def test_the_pytest_helper_fails_with_the_case_and_skips_refusals():
    broken = conformance_tests(load_target(f"{BROKEN}:gqa_tile"))
    broken("basic")  # passes
    with pytest.raises(pytest.fail.Exception, match=r"gqa: max abs error .*\n  smallest failing"):
        broken("gqa")

    def no_masks(q, k, v, attn_mask=None, **kw):
        if attn_mask is not None:
            raise NotImplementedError("no masks here")
        return F.scaled_dot_product_attention(q, k, v, **kw)

    with pytest.raises(pytest.skip.Exception, match="no masks here"):
        conformance_tests(no_masks)("bool_mask")
    with pytest.raises(pytest.fail.Exception, match="bool_mask unsupported"):
        conformance_tests(no_masks, unsupported="fail")("bool_mask")


def test_help_says_how_a_target_declares_a_refusal(capsys):
    assert main(["conform", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "declares that it does not support a feature by raising TypeError or" in out
    assert "NotImplementedError" in out and "'No available kernel'" in out


def _rerun(script: Path, target: str | None = None) -> int:
    """Run a saved repro.py in this process (optionally on another target); its exit code."""
    if target is not None:
        text = script.read_text()
        start = text.index("fn = load_target(")
        end = text.index("\n", start)
        script.write_text(text[:start] + f"fn = load_target({target!r})" + text[end:])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(script), run_name="__main__")
    return exit_.value.code


def test_save_failing_writes_a_case_and_a_script_that_reproduces_it(tmp_path, capsys):
    out = tmp_path / "failing"
    assert main(["conform", f"{BROKEN}:nan_dead_grads", "--save-failing", str(out)]) == 1
    assert "saved gradients's failing case: python" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["gradients"]  # see rows: not their own
    data = np.load(out / "gradients" / "case.npz", allow_pickle=False)
    assert {"q", "k", "v", "mask", "grad_out", "expected_dq", "got_dq", "budget_dq"} <= set(data)
    assert np.isnan(data["got_dq"]).any() and not np.isnan(data["expected_dq"]).any()
    assert np.isfinite(data["expected_dq"]).all() and data["mask"].dtype == np.float64
    script = out / "gradients" / "repro.py"
    assert "some rows fully masked" in script.read_text()
    assert _rerun(script) == 1
    assert "dq: max abs error inf" in capsys.readouterr().out
    assert _rerun(script, f"{BROKEN}:attention") == 0  # the same case, a correct target
    assert "dq: max abs error" in capsys.readouterr().out


def test_save_failing_numpy_and_strided_cases_rerun(tmp_path, capsys):
    target = tmp_path / "mine.py"
    target.write_text(  # reads a sliced view's buffer as if it were contiguous
        "import numpy as np\nfrom attnlab import ref\n"
        "def attn(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):\n"
        "    if not k.flags.c_contiguous:\n"
        "        k = k.base.reshape(-1)[: k.size].reshape(k.shape)\n"
        "    return ref.scaled_dot_product_attention(q, k, v, attn_mask, is_causal, scale)\n"
    )
    out = tmp_path / "f"
    rc = main(
        [
            "conform",
            f"{target}:attn",
            "--api",
            "numpy",
            "--features",
            "non_contiguous",
            "--save-failing",
            str(out),
        ]
    )
    assert rc == 1
    capsys.readouterr()
    assert _rerun(out / "non_contiguous" / "repro.py") == 1
    assert (
        _rerun(out / "non_contiguous" / "repro.py", "attnlab.ref:scaled_dot_product_attention") == 0
    )


@pytest.mark.parametrize("make", ["file", "under_a_file"])
def test_save_failing_a_bad_folder_is_one_line_before_any_work(tmp_path, make, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    path = blocker if make == "file" else blocker / "sub"
    assert main(["conform", "nowhere/missing.py:f", "--save-failing", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--save-failing {str(path)!r}" in err  # not the target


def test_the_pytest_helper_runs_declared_opt_in_rows_and_names_the_convention():
    test = conformance_tests(load_target(f"{HERE}/variants.py:window_wide"))
    assert test.pytestmark[0].args[1][-6:] == list(OPT_IN_IDS)
    with pytest.raises(pytest.fail.Exception, match=r"looks like: the window reaches one key"):
        test("sliding_window")
    test("softcap")  # the kit ran once; this row passed


def test_a_row_failing_through_two_others_says_see_when_80_columns_cannot_name_them():
    from attnlab.conform.report import FeatureResult, Report

    names = ["causal_cross_length", "fully_masked_rows"]
    note = f"3 of 8 cases fail, each needing {names[0]} or {names[1]}, which fails on its own row"
    rows = [
        FeatureResult("basic", "self-attention, no mask", "pass", 1e-7, 1e-6, 2),
        FeatureResult("gradients", "dq, dk, dv", "see", 1.0, 1e-6, 8, note=note, see=names),
    ]
    report = Report("t.py:f", "torch", "cpu", 0, "2.13.0", rows)
    wide, narrow = report.text().splitlines(), report.text(80).splitlines()
    assert any(line.split()[:3] == ["gradients", "see", f"{names[0]},"] for line in wide)
    assert max(map(len, narrow)) <= 80 < max(map(len, wide))
    assert any(line.split()[:3] == ["gradients", "see", "1.00e+00"] for line in narrow)
    assert " ".join(narrow).count("fully_masked_rows") == 1  # named once, in its SEE line
