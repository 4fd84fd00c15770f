"""The grader's diagnosis, rule by rule: what a learner sees (the named mistakes, in order, and
each failed check's message) for one submission at one seed, judged in-process, and the
comparisons the naming rests on. Written from the mutants that survived ``tests/grade/
test_diagnosis.py`` (tools/mutation.sh); fast: one seed, small functions written here."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.grade import diagnosis as dg
from attnlab.grade.exercises import EXERCISES
from attnlab.grade.grader import forget_prepared, prepared
from attnlab.grade.inprocess import run_in_process
from attnlab.grade.results import CheckResult
from attnlab.grade.sandbox import CaseResult, RunResult


@pytest.fixture(autouse=True)
def _fresh_cases():
    """Each test prepares its cases itself: the grader keeps them per process (with each
    case's versions), so a test after another would otherwise judge with the other's."""
    forget_prepared()


def _softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def attention(X, W_Q, W_K, W_V, mask=False, scale=True):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = Q @ K.T / (np.sqrt(K.shape[1]) if scale else 1.0)
    if mask:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    w = _softmax(s)
    return w @ V, w


def _judge(fn, printed: str = "", exercise: str = "self_attention", **run_fields):
    prep = prepared(exercise, 0)
    run = run_in_process(fn, [*prep.cases, *prep.twins])
    for k, v in run_fields.items():
        setattr(run, k, v)
    return dg.judge(prep, run, printed)


def _failed(f) -> dict[str, str]:
    assert all(c.passed is True or c.passed is False for c in f.checks)  # the report's JSON
    return {c.name: c.message for c in f.checks if not c.passed}


# ---- whole submissions: the ids a learner is shown, in order ------------------------------------


def test_a_right_answer_names_nothing_and_passes_every_check():
    f = _judge(attention)
    assert f.ids == [] and _failed(f) == {}
    assert f.checks[-1] == CheckResult("inputs left unchanged", True, "", scored=True)


def test_one_known_mistake_is_named_alone_with_the_numbers_it_got_wrong():
    f = _judge(lambda *a, mask=False: attention(*a, mask=mask, scale=False))
    assert f.ids == ["missing_scale"]
    assert f.named == ["missing_scale"] and f.keys and all(k[0] == "missing_scale" for k in f.keys)
    msg = _failed(f)["T=5 d_model=6 d_k=3 unmasked"]
    assert msg.startswith("output: ") and "; at [" in msg and "expected" in msg
    # the cases a version reproduced are the failing ones (ones with T=1 pass: one key)
    assert set().union(*f.where.values()) >= {2, 4, 9}


def test_inputs_changed_in_place_come_last_and_name_the_input():
    def fn(X, W_Q, W_K, W_V, mask=False):
        out = attention(X, W_Q, W_K, W_V, mask)
        W_V *= 2
        return out

    f = _judge(fn)
    assert f.ids == ["mutates_input"]
    assert _failed(f) == {"inputs left unchanged": "changed its input(s) W_V in place"}
    assert f.mutated == ["W_V"]

    def both(X, W_Q, W_K, W_V, mask=False):
        out = attention(X, W_Q, W_K, W_V, mask, scale=False)
        X[...] = 0
        return out

    f = _judge(both)
    assert f.ids == ["missing_scale", "mutates_input"]


def test_randomness_inside_is_named_first_with_its_check():
    rng = np.random.default_rng(0)

    def fn(X, W_Q, W_K, W_V, mask=False):
        out, w = attention(X, W_Q, W_K, W_V, mask)
        return out + 1e-3 * rng.standard_normal(out.shape), w

    f = _judge(fn)
    assert f.ids[0] == "random_inside"
    failed = _failed(f)
    assert failed["same answer for the same inputs"].endswith(
        ": two calls with the same inputs gave different answers"
    )
    assert failed["same answer for the same inputs"].startswith("T=5 d_model=6 d_k=3 unmasked")


def test_random_answers_that_match_by_chance_are_random_inside_never_stored():
    """A random function (dropout) whose weights for a case and its twin came out the same
    (dropout zeroing the one row where they differ, about 1 draw in 600 on a saturated case)
    is named random_inside, not hardcoded_output: what changes between two calls with the
    same inputs is no table of answers."""
    prep = prepared("self_attention", 0)
    rng = np.random.default_rng(0)
    table = {}
    for c, want in zip(prep.cases, prep.expected, strict=True):
        table.setdefault((c.arrays["X"].shape, c.kwargs["mask"]), want[1])

    def fn(X, W_Q, W_K, W_V, mask=False):
        out, _ = attention(X, W_Q, W_K, W_V, mask)
        return out + 1e-3 * rng.standard_normal(out.shape), table[X.shape, mask]

    run = run_in_process(fn, [*prep.cases, *prep.twins])
    assert dg.hardcoded(prep, run, prep.twin_expected)  # the stored-answer evidence is there
    f = _judge(fn)
    assert f.ids[0] == "random_inside" and "hardcoded_output" not in f.ids


def test_answers_stored_by_shape_are_named_hardcoded():
    prep = prepared("self_attention", 0)
    table = {}
    for c, want in zip(prep.cases, prep.expected, strict=True):
        table.setdefault((c.arrays["X"].shape, c.kwargs["mask"]), want)

    def stored(X, W_Q, W_K, W_V, mask=False):
        return table[X.shape, mask]

    f = _judge(stored)
    assert f.ids[0] == "hardcoded_output" and not f.named
    # the same table, consulted only for the first case of each shape, then computed: still
    # stored (a case and its twin got the same non-constant answer)
    assert dg.hardcoded(
        prep, run_in_process(stored, [*prep.cases, *prep.twins]), prep.twin_expected
    )
    right = run_in_process(attention, [*prep.cases, *prep.twins])
    assert not dg.hardcoded(prep, right, prep.twin_expected)


def test_answers_stored_for_the_exact_inputs_are_caught_by_the_twins():
    prep = prepared("self_attention", 0)
    exact, by_shape = {}, {}
    for c, want in zip(prep.cases, prep.expected, strict=True):
        X = c.arrays["X"]
        exact[X.tobytes(), c.kwargs["mask"]] = want
        by_shape.setdefault((X.shape, X.dtype, c.kwargs["mask"]), want)

    def stored(X, W_Q, W_K, W_V, mask=False):  # right on every case; a twin gets its case's
        return exact.get((X.tobytes(), mask)) or by_shape[X.shape, X.dtype, mask]

    f = _judge(stored)
    assert f.ids == ["hardcoded_output"] and _failed(f) == {}


def test_answers_looked_up_by_the_exact_inputs_that_raise_elsewhere_are_named():
    """A table of the cases' answers that raises on any other input: every case is right,
    the twins (same shapes, other numbers) crash. Named as stored answers, not passed."""
    prep = prepared("self_attention", 0)
    exact = {
        (c.arrays["X"].tobytes(), c.kwargs["mask"]): want
        for c, want in zip(prep.cases, prep.expected, strict=True)
    }

    def lookup(X, W_Q, W_K, W_V, mask=False):
        return exact[X.tobytes(), mask]  # KeyError on anything but a case's own input

    f = _judge(lookup)
    assert f.ids == ["hardcoded_output"] and _failed(f) == {}

    def honest_but_fragile(X, W_Q, W_K, W_V, mask=False):  # wrong on the cases: not "stored"
        if (X.tobytes(), mask) not in exact:
            raise ValueError("only the cases")
        return 2 * exact[X.tobytes(), mask][0]

    assert "hardcoded_output" not in _judge(honest_but_fragile).ids


def test_two_mistakes_at_once_are_named_when_one_pair_explains_every_answer():
    def both(x):  # no max shift (NaN on large inputs) and no keepdims (crash on non-square)
        e = np.exp(x)
        return e / e.sum(axis=1)

    f = _judge(both, exercise="softmax_rows")
    assert f.ids == ["missing_keepdims", "unstable_softmax"]
    assert f.keys and all(isinstance(k[0], tuple) for k in f.keys)

    def odd(x):  # beside them, a mistake outside the catalogue: no pair explains it, no name
        return 1.5 * both(x)

    assert _judge(odd, exercise="softmax_rows").ids == ["crash", "wrong_return"]

    def two_families(X, W_Q, W_K, W_V, mask=False):  # V from W_K and no scale
        return attention(X, W_Q, W_K, W_K, mask, scale=False)

    f = _judge(two_families)
    assert sorted(f.ids) == ["missing_scale", "wrong_value_projection"]


def test_a_constant_answer_is_not_called_stored():
    def zeros(X, W_Q, W_K, W_V, mask=False):
        T = X.shape[0]
        return np.zeros((T, W_V.shape[1])), np.zeros((T, T))

    f = _judge(zeros)  # wrong everywhere, like no known mistake: failed, and no name
    assert f.ids == [] and "course example 3x2 unmasked" in _failed(f)


def test_an_imitated_report_is_named_first_beside_the_numbers():
    f = _judge(lambda *a, mask=False: attention(*a, mask=mask, scale=False), printed="PASSED\n")
    assert f.ids == ["grader_tampering", "missing_scale"]
    assert _failed(f)["leaves NumPy and the grader alone"] == (
        "printed an imitation of the grader's report (the verdict is computed outside: no effect)"
    )
    f = _judge(attention, tampered=["np.allclose", "print"])
    assert f.ids == ["grader_tampering"]
    assert _failed(f)["leaves NumPy and the grader alone"] == (
        "replaced np.allclose, print (the verdict is computed outside: no effect)"
    )
    f = _judge(attention, "self_attention: 3/4 checks passed", tampered=["np.exp"])
    assert _failed(f)["leaves NumPy and the grader alone"].startswith(
        "replaced np.exp; printed an imitation"
    )


def test_a_forbidden_attempt_comes_first_and_hides_stored_answers():
    f = _judge(lambda *a, mask=False: attention(*a, mask=mask, scale=False), attempts=["torch"])
    assert f.ids == ["forbidden_import", "missing_scale"]
    assert _failed(f)["allowed imports"] == "tried to reach torch at run time (not available here)"
    f = _judge(attention, attempts=["attnlab", "torch"])
    assert f.ids == ["forbidden_import"]
    assert _failed(f)["allowed imports"].startswith("tried to reach attnlab, torch at run time")


def test_wrong_kinds_of_answer_are_named_wrong_return_with_what_came_back():
    f = _judge(lambda *a, mask=False: attention(*a, mask=mask)[1])
    assert f.ids == ["wrong_return"]
    msg = _failed(f)["course example 3x2 unmasked"]
    assert msg == "expected a tuple (output, weights), got ndarray"
    f = _judge(lambda *a, mask=False: (*attention(*a, mask=mask), 0))
    assert _failed(f)["course example 3x2 unmasked"] == (
        "expected a tuple (output, weights), got tuple of 3"
    )
    f = _judge(lambda *a, mask=False: (attention(*a, mask=mask)[0], "w"))
    assert _failed(f)["course example 3x2 unmasked"] == "weights: expected a numeric array, got str"
    f = _judge(lambda *a, mask=False: (attention(*a, mask=mask)[0], np.zeros(3)))
    assert _failed(f)["course example 3x2 unmasked"] == "weights has shape (3,), expected (3, 3)"
    assert f.ids == ["wrong_return"]
    f = _judge(lambda *a: [np.zeros(3)], exercise="softmax_rows")
    assert f.ids == ["wrong_return"]
    assert next(iter(_failed(f).values())).startswith("expected one array (")
    assert next(iter(_failed(f).values())).endswith("), got a list")


def test_a_named_mistake_explains_its_crashes_but_not_a_crash_of_its_own():
    def flat_sums(x):  # no keepdims: wrong on square inputs, a raise or a square on others
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1)

    f = _judge(flat_sums, exercise="softmax_rows")
    assert f.ids == ["missing_keepdims"]
    failed = _failed(f)
    assert failed["random 4x7"].startswith("raised ValueError: operands could not be broadcast")
    assert failed["one column 4x1"] == "weights has shape (4, 4), expected (4, 1)"

    def one_row_too(x):
        assert len(x) > 1
        return flat_sums(x)

    assert _judge(one_row_too, exercise="softmax_rows").ids == ["missing_keepdims", "crash"]


def test_a_case_that_imported_a_forbidden_module_is_named_for_it():
    prep = prepared("self_attention", 0)
    run = run_in_process(attention, [*prep.cases, *prep.twins])
    run.cases[1] = CaseResult(forbidden="torch")
    f = dg.judge(prep, run)
    assert f.ids == ["forbidden_import"]
    assert _failed(f) == {
        "course example 3x2 masked": "imports 'torch', which this exercise forbids"
    }


def test_a_raise_is_named_crash_with_its_last_line():
    def fn(X, W_Q, W_K, W_V, mask=False):
        if mask:
            raise ValueError("no masks here")
        return attention(X, W_Q, W_K, W_V)

    f = _judge(fn)
    assert f.ids == ["crash"]
    msg = _failed(f)["course example 3x2 masked"]
    assert msg.startswith("raised ValueError: no masks here\nTraceback")
    assert "course example 3x2 unmasked" not in _failed(f)


def test_integer_and_half_precision_answers_are_named_by_their_dtype():
    f = _judge(
        lambda *a, mask=False: tuple(
            np.round(p * 100).astype(int) for p in attention(*a, mask=mask)
        )
    )
    assert f.ids[0] == "wrong_dtype"
    f = _judge(lambda *a, mask=False: tuple(p.astype(np.float16) for p in attention(*a, mask=mask)))
    assert f.ids == ["low_precision"]
    f = _judge(lambda *a, mask=False: tuple(p.astype(np.float32) for p in attention(*a, mask=mask)))
    assert f.ids == [] and _failed(f) == {}


def test_a_float32_answer_is_compared_with_the_versions_run_in_float32():
    def no_max32(x):  # overflows in float32 where the same code in float64 does not
        e = np.exp(x.astype(np.float32))
        return e / e.sum(axis=1, keepdims=True)

    assert _judge(no_max32, exercise="softmax_rows").ids == ["unstable_softmax"]

    def neither32(X, W_Q, W_K, W_V, mask=False):  # no scale and no max shift, in float32
        X, W_Q, W_K, W_V = (a.astype(np.float32) for a in (X, W_Q, W_K, W_V))
        s = (X @ W_Q) @ (X @ W_K).T
        if mask:
            s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
        w = np.exp(s) / np.exp(s).sum(axis=1, keepdims=True)
        return w @ (X @ W_V), w

    assert _judge(neither32).ids == ["missing_scale", "unstable_softmax"]


def test_a_probe_reads_a_wrong_base_only_when_rebuilding_reproduces_the_table():
    def base_777(T, d):
        pos, i = np.arange(T)[:, None], np.arange(0, d, 2)
        pe = np.zeros((T, d))
        pe[:, 0::2] = np.sin(pos / 777.0 ** (i / d))
        pe[:, 1::2] = np.cos(pos / 777.0 ** (i[: d // 2] / d))
        return pe

    assert _judge(base_777, exercise="positional_encoding").ids == ["pe_wrong_base"]
    noisy = _judge(lambda T, d: base_777(T, d) + 0.01, exercise="positional_encoding")
    assert noisy.ids == [] and _failed(noisy)


def test_an_answer_of_nothing_but_nan_is_nan_output_in_any_precision():
    for dtype in (np.float64, np.float16):
        f = _judge(lambda x, dt=dtype: np.full(x.shape, np.nan, dtype=dt), exercise="softmax_rows")
        assert f.ids == ["nan_output"]


def test_nan_on_ordinary_inputs_is_named_nan_output():
    def fn(X, W_Q, W_K, W_V, mask=False):
        out, w = attention(X, W_Q, W_K, W_V, mask)
        out = out.copy()
        out[0, 0] = np.nan
        return out, w

    f = _judge(fn)
    assert f.ids == ["nan_output"]
    assert _failed(f)["course example 3x2 unmasked"] == (
        "output has NaN/Inf at [0, 0] where the answer is finite"
    )


def test_a_mask_is_judged_as_bools_and_a_float_mask_is_named():
    def ints(T, S=None):
        return np.tril(np.ones((T, T if S is None else S), dtype=int))

    f = _judge(ints, exercise="causal_mask")
    assert f.ids == ["mask_dtype"]
    msg = next(iter(_failed(f).values()))
    assert msg.startswith("mask is int64, expected a bool array")

    def shifted(T, S=None):
        return np.tril(np.ones((T, T if S is None else S), dtype=bool), -1)

    f = _judge(shifted, exercise="causal_mask")
    assert f.ids == ["mask_diagonal_excluded"]
    assert "mask differs from the expected mask at [0, 0]" in _failed(f).values()


# ---- the run as a whole and the source -------------------------------------------------------

EX = EXERCISES["self_attention"]


@pytest.mark.parametrize(
    ("run", "name", "message", "mid"),
    [
        (RunResult([], timeout=True, crashed="x"), "finishes in time", "still running after 2.5 s", "timeout"),
        (RunResult([], crashed="killed", forbidden="torch"), "runs", "the process died: killed", "crash"),
        (RunResult([], forbidden="torch", missing="f"), "allowed imports", "imports 'torch' at run time", "forbidden_import"),
        (RunResult([], missing="f", load_error="x"), "defines the function", "no function named 'f'; expected " + EX.signature, "missing_function"),
        (RunResult([], load_error="Traceback\n  ...\nKeyError: 3\n\n"), "loads", "raised while loading: KeyError: 3\nTraceback\n  ...\nKeyError: 3", "crash"),
    ],
)  # fmt: skip
def test_a_run_without_results_gets_one_check_and_one_id(run, name, message, mid):
    check, got = dg.run_failure(run, EX, 2.5)
    assert (check.name, check.passed, check.message, got) == (name, False, message, mid)


def test_a_run_with_results_has_no_run_failure():
    assert dg.run_failure(RunResult([]), EX, 1.0) is None


def test_last_line_is_the_last_non_blank_line():
    assert dg.last_line("a\n b \n\n  \n") == " b" and dg.last_line("x\n\ny") == "y"
    assert dg.last_line("") == "error" and dg.last_line("\n \n") == "error"


def test_a_syntax_error_names_its_line_and_shows_it():
    checks, mid = dg.static_checks("x = 1\ndef f(:\n    pass\n", EX)
    assert mid == "syntax_error" and len(checks) == 1
    c = checks[0]
    assert (c.name, c.passed, c.scored) == ("valid Python", False, False)
    assert c.message.startswith("line 2: ") and c.message.endswith("\n    def f(:")
    (c,), mid = dg.static_checks("x = 1\0", EX)  # no line to show
    assert mid == "syntax_error" and c.message == "source code string cannot contain null bytes"


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ("import torch.nn", ["torch"]),
        ("from attnlab.ref import sdpa", ["attnlab"]),
        ("import numpy, json, scipy", ["scipy"]),
        ("import numpy.linalg, os.path", []),
        ("open(3)", []),
        ("(lambda s: s)('torch')", []),
        ("from . import x", []),
        ("import importlib\nimportlib.import_module('torch.nn')", ["torch"]),
        ("__import__(name='attnlab')", ["attnlab"]),
        ("exec('import torch')", ["torch"]),
        ("exec('  from   attnlab import ref')", ["attnlab"]),
        ("open('/site-packages/attnlab/ref/sdpa.py')", ["attnlab"]),
        ("open('C:\\\\lib\\\\torch\\\\x.py')", ["torch"]),
        ("print('torch')", []),
        ("open('torchvision.txt')", []),
        ("x = 'import torch'", []),
    ],
)
def test_forbidden_imports_by_any_route(source, bad):
    import ast

    assert dg.forbidden_imports(ast.parse(source), ("numpy",)) == bad
    checks, mid = dg.static_checks(source, EX)
    if bad:
        assert mid == "forbidden_import" and checks[-1].name == "allowed imports"
        assert checks[-1].message == (
            f"imports {', '.join(bad)}; allowed here: numpy and the standard library"
        )
        assert not checks[-1].passed and not checks[-1].scored
    else:
        assert mid is None
        assert checks == [
            CheckResult("valid Python", True, scored=False),
            CheckResult("allowed imports", True, scored=False),
        ]


def test_the_import_message_lists_every_bad_module_and_every_allowed_one():
    class Two:
        allowed_imports = ("numpy", "scipy")

    (ok, check), _ = dg.static_checks("import torch, attnlab.ref, scipy", Two)
    assert ok == CheckResult("valid Python", True, scored=False)
    assert check == CheckResult(
        "allowed imports",
        False,
        "imports attnlab, torch; allowed here: numpy, scipy and the standard library",
        scored=False,
    )


def test_without_an_import_rule_only_parsing_is_checked():
    class Free:
        allowed_imports = None

    checks, mid = dg.static_checks("import torch", Free)
    assert mid is None and [c.name for c in checks] == ["valid Python"]


@pytest.mark.parametrize(
    ("printed", "imitates"),
    [
        ("PASSED", True),
        ("  合格  \nmore", True),
        ("通过", True),
        ("✔ self_attention: 3/4 checks passed", True),
        ("softmax_rows: 1/2 チェック合格", True),
        ("softmax_rows: 1/2 项检查通过", True),
        ('{"passed": true, "score": 1.0}', True),
        ('  {"passed": true, "score": 1.0, "x": 2}  ', True),
        ('{"passed": true}', False),
        ('{"passed": true, "score": 1', False),
        ('["passed", "score"]', False),
        ("PASSED the first test", False),
        ("3/4 checks passed", False),
        ("loss 0.25", False),
    ],
)
def test_an_imitated_report_is_its_verdict_line_header_or_json(printed, imitates):
    assert dg.imitates_report(printed) is imitates
    checks = dg.tampering_checks(RunResult([]), printed)
    assert (checks != []) is imitates


# ---- the comparisons ----------------------------------------------------------------------


def test_close_tolerances_and_non_finite_numbers():
    one = np.array([1.0])
    assert dg.close(one + 0.9e-5, one) and not dg.close(one + 1.1e-5, one)
    assert dg.close(np.array([0.9e-8]), np.array([0.0]))
    assert not dg.close(np.array([1.1e-8]), np.array([0.0]))
    assert dg.close(one * 1.05, one, rtol=0.1) and not dg.close(one * 1.05, one, rtol=0.01)
    inf, nan = np.array([np.inf, 1.0]), np.array([np.nan, 1.0])
    assert dg.close(inf, inf) and dg.close(nan, nan)
    assert not dg.close(inf, -inf) and not dg.close(nan, np.array([1.0, 1.0]))
    assert not dg.close(np.array([np.inf, 2.0]), inf)
    assert dg.close(one, one, rtol=0, atol=0)  # equal numbers with no tolerance at all
    assert dg.close(np.array([1.5]), one, rtol=0, atol=0.5)  # the bound itself is close


def test_a_version_matches_within_the_answers_precision_and_only_when_it_is_wrong():
    e = (np.array([1.0, 2.0]),)
    c = (np.array([1.5, 2.0]),)
    near = [c[0] + 1e-4]
    assert not dg.matches(near, c, e, low_precision=False)
    assert dg.matches(near, c, e, low_precision=True)
    assert dg.matches([near[0].astype(np.float32)], c, e, low_precision=False)
    assert dg.matches([c[0] + 1e-8], c, e, low_precision=False)
    assert dg.matches([e[0]], e, e, low_precision=False) is False  # a version equal to the truth
    assert dg.matches([e[0]], e, e, low_precision=False, known=True)
    assert not dg.matches([c[0]], None, e, False) and not dg.matches([c[0], c[0]], c, e, False)
    assert not dg.matches([None], c, e, False) and not dg.matches([c[0][:1]], c, e, False)
    # a version of another shape than the answer differs from the truth by its shape alone
    assert dg.matches([np.ones(3)], (np.ones(3),), e, False)


def test_differs_by_shape_or_beyond_the_tolerance():
    e = (np.array([1.0, 2.0]),)
    assert dg.differs((np.ones(3),), e)
    assert dg.differs((e[0] + 1e-4,), e) and not dg.differs((e[0] + 1e-4,), e, True)
    assert dg.differs((e[0] + 1e-2,), e, True)
    assert not dg.differs((e[0] + 1e-9,), e)


def test_weigh_keeps_versions_that_differ_from_the_truth():
    e = (np.array([1.0, 2.0]),)
    wrong, other = (np.array([3.0, 2.0]),), (np.array([0.0, 2.0]),)
    cands = {"a": [wrong, e, None], "b": [other], "c": [(e[0] + 1e-4,)]}
    assert dg.weigh(cands, [wrong[0]], e, False) == {
        ("a", 0): True,
        ("b", 0): False,
        ("c", 0): False,
    }
    assert dg.weigh(cands, [wrong[0] + 1e-4], e, True) == {("a", 0): True, ("b", 0): False}
    # c is within float32's tolerance of the truth: a version only where the task is float64
    assert dg.weigh(cands, [wrong[0] + 1e-4], e, False) == {
        ("a", 0): False,
        ("b", 0): False,
        ("c", 0): False,
    }


def test_supported_names_the_best_supported_first_and_drops_what_adds_nothing():
    matched = {("a", 0): {1}, ("b", 0): {1, 2, 3}, ("c", 0): {2}, ("d", 0): {4}, ("e", 1): {5, 6}}
    assert dg.supported(matched, refuted={("e", 1)}) == ["b", "d"]
    assert dg.supported(matched, refuted={("b", 0)}) == ["e", "a", "c", "d"]
    assert dg.supported({}, set()) == []
    matched = {("a", 0): {1}, ("a", 1): {2}, ("b", 0): {1, 2}}
    assert dg.supported(matched, {("a", 0)}) == ["b"]
    assert dg._cases_by_id(matched, {("a", 0)}) == {"a": {2}, "b": {1, 2}}


@pytest.mark.parametrize(
    ("answer", "float32_case", "budget"),
    [
        (np.float64, False, None),
        (np.float32, False, np.float32),
        (np.float16, False, np.float32),
        (np.float64, True, np.float32),
    ],
)
def test_an_answer_gets_the_budget_of_the_task_never_a_wider_one(answer, float32_case, budget):
    class Case:
        float32 = float32_case

    assert dg._judged_precision(np.dtype(answer), Case) is budget


def test_a_float64_number_is_rounded_down_or_up_to_float32_never_further():
    exact = np.random.default_rng(0).normal(size=(400,)) * 1e3
    exact[:5] = [0.5, -2.0, 0.0, 3.0, np.inf]  # exact in float32: kept
    got = dg._rounded_either_way(exact, np.float32, np.random.default_rng(1))
    near = exact.astype(np.float32)
    assert got.dtype == np.float32 and np.array_equal(got[:5], near[:5])
    assert 100 < (got != near).sum() < 300  # either way, at random
    gap = np.nextafter(near[5:], np.float32(np.inf)) - near[5:]  # one ulp
    assert (np.abs(got[5:].astype(np.float64) - exact[5:]) <= gap).all()
    mask = np.tril(np.ones((3, 3), dtype=bool))
    assert dg._rounded_either_way(mask, np.float32, np.random.default_rng(1)) is mask


def _plain(prep, i):
    """Case ``i``'s naive answer on its inputs rounded to nearest float32 (one run)."""
    case = prep.cases[i]
    args = [a.astype(np.float32) for a in dg.as_float64(case)]
    return prep.ex.naive(*args, *case.scalars, **case.kwargs)[0]


def test_the_float32_yardstick_is_the_worst_of_its_runs_and_the_plain_run_is_one():
    prep = prepared("multi_head_attention", 2)
    wider = []
    for i, case in enumerate(prep.cases):
        worst, plain, want = prep.naive(i, np.float32)[0], _plain(prep, i), prep.expected[i][0]
        assert worst.dtype == np.float32 and dg._error(worst, want) >= dg._error(plain, want)
        if case.float32:  # inputs already float32: every run is the plain run
            assert np.array_equal(worst, plain)
        wider += [i] if dg._error(worst, want) > dg._error(plain, want) else []
    # the other roundings count: a right float32 einsum answer erred 2.4x the plain run on
    # this seed's large-magnitude case (on an AMD EPYC) and failed
    assert wider


def test_stored_means_bit_identical_not_constant_and_rightly_different():
    a = np.array([[1.0, 2.0]])
    assert dg._stored_part((a,), (a.copy(),), (a,), (a + 1,))
    assert not dg._stored_part((a,), (a.copy(),), (a,), (a,))  # the right answers agree
    assert not dg._stored_part((a,), (a + 1e-12,), (a,), (a + 1,))  # not bit-identical
    assert not dg._stored_part((np.ones((1, 2)),) * 1, (np.ones((1, 2)),), (a,), (a + 1,))
    assert not dg._stored_part((a,), (a, a), (a,), (a + 1,))
    assert not dg._stored_part((a.astype(int),), (a.astype(int),), (a,), (a + 1,))
    assert dg._stored_part((np.ones(2), a), (np.zeros(2), a), (a, a), (a, a + 1))
    assert not dg._informative((np.array([1.0]),)) and not dg._informative((np.array([np.nan, 1]),))
    assert dg._informative((np.ones(2), np.array([0.0, 1.0])))


def test_all_broken_means_every_float_number_is_nan_or_inf():
    nan = np.full(2, np.nan)
    assert dg._all_broken([nan, np.full(2, np.inf)])
    assert not dg._all_broken([nan, np.array([np.nan, 0.0])])
    assert not dg._all_broken([np.array([1, 2])]) and not dg._all_broken([np.array([])])
    assert dg._low([None, np.ones(1, np.float32)]) and not dg._low([np.ones(1)])
    assert dg._low([np.ones(1, np.float16)]) and not dg._low([np.ones(1, np.int32)])


def test_a_case_result_with_an_error_has_no_answers():
    ex = EXERCISES["softmax_rows"]
    assert dg._answers(ex, CaseResult([np.ones(2)], error="x")) is None
    assert dg._answers(ex, CaseResult([None])) is None and dg._answers(ex, CaseResult([])) is None
    assert dg._answers(ex, CaseResult([np.ones(2), np.ones(3)]))[0].shape == (2,)


def test_close_each_is_allclose_with_equal_nans_for_each_version():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 4))
    a[0, 0], a[1, 1] = np.nan, np.inf
    stack = a + rng.choice([0.0, 1e-9, 1e-6, 1e-3], size=(60, 3, 4)) * rng.normal(size=(60, 3, 4))
    for n in range(0, 60, 4):  # NaN and infinities where the answer has none, or another
        stack[n][rng.integers(3), rng.integers(4)] = [np.nan, np.inf, -np.inf][n % 3]
    for rtol, atol in ((1e-5, 1e-8), (1e-3, 1e-5)):
        each = [bool(np.allclose(a, b, rtol, atol, equal_nan=True)) for b in stack]
        assert dg.close_each(a, stack, rtol, atol).tolist() == each
        assert 0 < sum(each) < len(each)  # both answers occur
        finite = np.nan_to_num(a, posinf=0.0)  # and the usual case: finite everywhere
        near = np.nan_to_num(stack, nan=0.0, posinf=0.0, neginf=0.0)
        each = [bool(np.allclose(finite, b, rtol, atol)) for b in near]
        assert dg.close_each(finite, near, rtol, atol).tolist() == each


def test_stacked_versions_weigh_an_answer_as_each_version_alone():
    """``Stacked.matching`` (every version at once) gives what ``matches`` gives each version,
    for answers of every kind: right shape or not, float32, a missing output, NaN."""
    rng = np.random.default_rng(2)
    right = (rng.normal(size=(3, 4)), _softmax(rng.normal(size=(3, 3))))
    versions = {}
    for k in range(30):
        out = right[0] + rng.choice([0.0, 1e-9, 1e-4, 1.0]) * rng.normal(size=(3, 4))
        weights = right[1] if k % 3 else right[1].T
        versions["softmax_axis", k] = [
            (out, weights),
            (out,),
            (out.T, weights),
            (out, weights[:2]),
        ][k % 4]
    answers = [
        [right[0], right[1].T],
        [versions["softmax_axis", 8][0], right[1]],
        [versions["softmax_axis", 8][0].astype(np.float32), right[1].astype(np.float32)],
        [right[0].T, right[1]],
        [*versions["softmax_axis", 8], right[0]],  # one output more than the right answer has
        [None, right[1]],
        [np.full((3, 4), np.nan), right[1]],
        [],
    ]
    stacked = dg.Stacked.of(versions)
    seen = set()
    for got in answers:
        for low in (False, True):
            each = {k: dg.matches(got, v, right, low, known=True) for k, v in versions.items()}
            assert stacked.matching(got, right, low) == each, (len(got), low)
            seen |= set(each.values())
    assert seen == {True, False}
