"""The `attnlab check` cases (attnlab.selfcheck) are the torch parity tests: every reference function, both dtypes."""

import numpy as np
import pytest

from attnlab import selfcheck
from attnlab.cli import main


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("case", selfcheck.CASES, ids=lambda c: f"{c.function}[{c.name}]")
@pytest.mark.parametrize("seed", [0, 7])
def test_reference_matches_torch(case, dtype, seed):
    row = selfcheck.run_case(case, dtype, seed)
    assert row.parity.ok, row.parity.message


def test_every_public_reference_function_is_checked():
    from attnlab import ref

    checked = {c.function for c in selfcheck.CASES}
    helpers = {
        "SCORES",
        "causal_mask",
        "padding_mask",
        "split_heads",
        "merge_heads",
        "default_block_size",
        "merge_attention",
    }
    # the conformance kit's opt-in rows: held to torch (causal_lower_right, SDPA with their
    # masks and biases) and to loops by tests/conform/test_ref_variants.py
    kit_rows = {
        "alibi_bias",
        "alibi_slopes",
        "causal_lower_right",
        "length_mask",
        "sliding_window_mask",
        "variant_attention",
    }
    assert set(ref.__all__) - helpers - kit_rows <= checked  # helpers: tested in tests/ref


def test_check_fails_when_an_implementation_is_wrong(monkeypatch):
    wrong = selfcheck.Case(
        "scaled_dot_product_attention",
        "missing scale",
        selfcheck.CASES[2].make,
        lambda q, k, v: selfcheck.ref.scaled_dot_product_attention(q, k, v, scale=1.0),
        selfcheck.CASES[2].oracle,
    )
    assert not selfcheck.run_case(wrong, np.float64).parity.ok
    assert not selfcheck.run_case(wrong, np.float32).parity.ok
    monkeypatch.setattr(selfcheck, "CASES", [wrong])
    assert main(["check"]) == 1


def test_check_command_passes_and_prints_json(capsys):
    import json

    assert main(["check", "--json", "--dtype", "float64"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and len(report["rows"]) == len(selfcheck.CASES)
    assert all(r["max_abs_err"] <= 1e-10 * 10 for r in report["rows"])


def test_the_table_fits_an_80_column_terminal_with_each_case_under_its_function(
    capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["check", "--dtype", "float64"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80
    at = lines[0].index("dtype")  # where the columns after the case start
    shown, function = [], None
    for line in lines[2 : lines.index("")]:
        if not line.startswith(" "):  # a function's heading
            function = line
        elif line[at:].strip():  # a case's row: its case name, then the numbers
            assert line[at:].split()[0] == "float64" and line.endswith("ok"), line
            shown.append([function, line[:at].strip()])
        else:  # the case name, continued under itself
            assert line[:2] == "  " and line[2] != " ", line
            shown[-1][1] += " " + line.strip()
    assert shown == [[c.function, c.name] for c in selfcheck.CASES]
    assert len(lines) > 2 + len(selfcheck.CASES) + len({c.function for c in selfcheck.CASES}) + 2
