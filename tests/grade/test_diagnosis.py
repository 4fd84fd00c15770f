"""Diagnosis: verdicts and names do not depend on the seed, probes find what they claim, and a
submission that fits no known mistake gets no name.

The corpus functions are our own (trusted), so the 20-seed sweep calls them in-process and runs
the grader's own judging code on their answers (``diagnosis.judge``); the sandboxed grader
itself is checked on a few seeds (the sweep covers the seeds).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attnlab.grade import grade_file, grade_source
from attnlab.grade.exercises import EXERCISES
from attnlab.grade.grader import prepared, verdict
from attnlab.grade.inprocess import run_in_process
from attnlab.grade.variants import estimated_pe_base, positional

CORPUS = Path(__file__).parent / "submissions"
NOT_VALUE_BASED = ("crash", "timeout", "syntax_error", "forbidden_import", "grader_tampering",
                   "missing_function", "fail", "mutates_input", "wrong_return")  # fmt: skip
VALUE_FILES = sorted(p for p in CORPUS.glob("*.py") if p.stem.split("__")[1] not in NOT_VALUE_BASED)
SEEDS = range(20)
SANDBOXED_SEEDS = (0, 7, 19)


def _verdict(path: Path, seed: int) -> tuple[bool, str | None]:
    exercise = path.stem.split("__")[0]
    ns: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    prep = prepared(exercise, seed)
    # a submission's own unseeded randomness (np.random.rand for dropout) draws from NumPy's
    # global state, which the tests run before this one in the worker leave behind: seeded
    # here (and put back), each seed's verdict is one fixed draw. Unseeded, about 1 draw in
    # 600 made random_inside's verdict hardcoded_output: on seed 13's saturated "large
    # magnitude" case (weights nearly one-hot) dropout could zero the one row where the right
    # weights of the case and its twin differ, leaving bit-identical weights for other inputs.
    state = np.random.get_state()  # noqa: NPY002  (the global state the submission draws from)
    np.random.seed(seed)  # noqa: NPY002
    try:
        r = verdict(prep, run_in_process(ns[exercise], [*prep.cases, *prep.twins]), [], "en")
    finally:
        np.random.set_state(state)  # noqa: NPY002
    return r.passed, (r.mistakes or [None])[0]


@pytest.mark.parametrize("path", VALUE_FILES, ids=lambda p: p.stem)
def test_verdict_and_name_are_the_same_for_every_seed(path):
    expected = path.stem.split("__")[1]
    verdicts = {_verdict(path, seed) for seed in SEEDS}
    want = (True, None) if expected == "pass" else (False, expected)
    assert verdicts == {want}, verdicts


@pytest.mark.parametrize(
    "name",
    ["softmax_rows__unstable_softmax__global_max", "additive_attention__unstable_softmax__no_max"],
)
def test_the_issues_seed_dependent_cases_fail_in_the_real_grader(name):
    for seed in SANDBOXED_SEEDS:  # the in-process sweep above covers all 20 seeds
        r = grade_file(CORPUS / f"{name}.py", seed=seed)
        assert not r.passed and r.mistakes[0] == "unstable_softmax", (seed, r.mistakes)


def test_an_untouched_starter_scores_zero_of_the_usual_points_in_both_graders(tmp_path):
    from attnlab.grade import check, write_starter

    r = grade_file(write_starter("self_attention", tmp_path))
    assert r.score == 0.0 and not r.passed and r.mistakes == []  # not written: no mistake
    assert [c.name for c in r.checks if not c.passed] == ["the function written"]
    assert "not written yet" in str(r) and "Traceback" not in str(r)
    # out of the same points as the in-process check and as any hand-in that answers
    answered = grade_file(CORPUS / "self_attention__missing_scale__no_sqrt.py")
    assert r.points == 0 and r.max_points == answered.max_points > 1
    assert check(write_starter("self_attention", tmp_path / "c")).max_points == r.max_points


def test_a_named_mistake_explains_the_crashes_and_shapes_its_own_version_shows():
    # without keepdims the row sums broadcast: wrong on square inputs, a ValueError on the
    # others, a (4, 4) answer for a (4, 1) input; the version of missing_keepdims does the same
    src = (CORPUS / "softmax_rows__missing_keepdims__flat_sums.py").read_text()
    r = grade_source(src, "softmax_rows", seed=0)
    failed = {c.name: c.message for c in r.checks if not c.passed}
    assert "ValueError" in failed["random 4x7"] and "shape (4, 4)" in failed["one column 4x1"]
    assert r.mistakes == ["missing_keepdims"]
    # a crash the mistake does not make stays named: this code also fails on one row
    one_row = src.replace("    e = ", "    assert len(x) > 1\n    e = ")
    r = grade_source(one_row, "softmax_rows", seed=0)
    assert r.mistakes == ["missing_keepdims", "crash"], r.mistakes


def test_two_mistakes_at_once_are_both_named_when_versions_making_both_explain_every_answer():
    # no max shift and no keepdims: NaN on large square inputs, a crash on the others; no one
    # mistake's version reproduces that, one making both does, on every case it can run
    src = (CORPUS / "softmax_rows__missing_keepdims__flat_sums.py").read_text()
    both = src.replace("np.exp(x - x.max(axis=1, keepdims=True))", "np.exp(x)")
    assert both != src
    for seed in (0, 1, 2):
        r = grade_source(both, "softmax_rows", seed=seed)
        assert r.mistakes == ["missing_keepdims", "unstable_softmax"], (seed, r.mistakes)
        assert r.hints["unstable_softmax"] and r.hints["missing_keepdims"]
    # a mistake outside the catalogue beside a known one: no pair explains every answer
    odd = both.replace("return e / e.sum(axis=1)", "return 1.5 * e / e.sum(axis=1)")
    generic = {"crash", "nan_output", "wrong_return"}
    assert not set(grade_source(odd, "softmax_rows", seed=0).mistakes) - generic


def test_two_mistakes_from_different_families_are_both_named():
    # V built from W_K (a projection slip) and no scale (an attention slip): one pair of
    # versions across the two families reproduces every answer; no single one does
    src = (CORPUS / "self_attention__pass__vectorized.py").read_text()
    two = src.replace("X @ W_V", "X @ W_K").replace(" / np.sqrt(K.shape[1])", "")
    assert two.count("X @ W_K") == 2 and "sqrt" not in two
    for seed in (0, 1):
        r = grade_source(two, "self_attention", seed=seed)
        assert sorted(r.mistakes) == ["missing_scale", "wrong_value_projection"], r.mistakes


def test_a_mistake_outside_the_catalogue_gets_no_name():
    src = (CORPUS / "self_attention__pass__vectorized.py").read_text()
    r = grade_source(src.replace("return", "return 1.5 *", 1), "self_attention", seed=0)
    assert not r.passed and r.mistakes == []  # shown as a diff, never guessed


def test_the_base_probe_reads_the_base_back():
    for base in (100.0, 1000.0, 12345.0, 10000.0):
        pe = positional(8, 16, base=base)
        assert estimated_pe_base(pe) == pytest.approx(base, rel=1e-9)
    assert estimated_pe_base(np.zeros((1, 4))) is None  # one position: nothing to read


def test_pe_base_is_named_only_when_rebuilding_reproduces_the_table():
    src = """import numpy as np
def positional_encoding(T, d):
    pos = np.arange(T)[:, None]
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(pos / 777.0 ** (np.arange(0, d, 2) / d))
    pe[:, 1::2] = np.cos(pos / 777.0 ** (np.arange(0, d, 2) / d))
    return pe
"""
    assert grade_source(src, "positional_encoding").mistakes == ["pe_wrong_base"]
    noisy = src.replace("return pe", "return pe + 0.01")  # a base can be read, but it is not it
    assert "pe_wrong_base" not in grade_source(noisy, "positional_encoding").mistakes


def test_hint_levels_go_from_concept_to_fix():
    from attnlab.grade.mistakes import MISTAKES, hint

    for mid, m in MISTAKES.items():
        one, two, three = (hint(mid, "en", k) for k in (1, 2, 3))
        assert one and two.startswith(one) and len(two) > len(one) and three == m.fix("en")
    r = grade_file(CORPUS / "self_attention__missing_scale__no_sqrt.py", seed=0, hint_level=1)
    assert r.hints["missing_scale"] == hint("missing_scale", "en", 1)
    assert "sqrt" not in r.hints["missing_scale"]  # level 1 names the concept, not the fix


def test_the_smallest_failing_case_is_shown_with_wrong_cells_marked():
    import json

    from attnlab.grade import report

    r = grade_file(CORPUS / "self_attention__mask_orientation__triu.py", seed=0)
    assert r.shown["name"] == "weights" and r.shown["case"]
    got, want = np.array(r.shown["got"], float), np.array(r.shown["expected"], float)
    assert got.shape == want.shape and got.size <= 9  # the smallest failing case: 3x3 here
    text = report.text(r)
    assert "yours | expected" in text and "*" in text
    nan = grade_file(CORPUS / "self_attention__mask_diagonal_excluded__strict_lower.py", seed=0)

    def no_constants(name):
        raise ValueError(f"{name} is not JSON")

    json.loads(report.to_json(nan), parse_constant=no_constants)  # NaN cells travel as null
    assert any(None in row for row in nan.shown["got"])
    sdpa = grade_file(CORPUS / "scaled_dot_product_attention__missing_scale__no_sqrt.py", seed=0)
    assert sdpa.shown is None  # that exercise returns no weights


def test_plot_draws_the_failing_case(tmp_path):
    from attnlab.cli import main

    out = tmp_path / "cmp.png"
    bad = CORPUS / "self_attention__mask_orientation__triu.py"
    assert main(["grade", str(bad), "--plot", str(out), "--seed", "0"]) == 1
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert main(["grade", str(CORPUS), "--plot", str(out)]) == 2  # one file only


def _notebook(*cells) -> str:
    import json

    return json.dumps(
        {
            "cells": [
                {"cell_type": kind, "source": src, "metadata": {}, "outputs": []}
                if kind == "code"
                else {"cell_type": kind, "source": src, "metadata": {}}
                for kind, src in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def test_notebook_errors_name_the_cell_and_line_and_ipython_cells_are_handled(tmp_path):
    nb = tmp_path / "hw.ipynb"
    nb.write_text(
        _notebook(
            ("markdown", "# My homework"),
            ("code", "import numpy as np\n%matplotlib inline\ndisplay('hello')"),
            (
                "code",
                "%%time\ndef self_attention(X, W_Q, W_K, W_V, mask=False):\n"
                "    Q = X @ W_Q\n    raise ValueError('not yet')",
            ),
            ("code", "%%bash\necho this is not Python"),
        )
    )
    r = grade_file(nb, seed=0)
    messages = "\n".join(c.message for c in r.checks)
    assert r.mistakes == ["crash"] and "not yet" in messages
    assert "cell 3, line 4" in messages  # the raise: 4th line of cell 3, counting %%time
    assert "cell 4 not run: %%bash" in messages  # said, not silently dropped
    assert "hello" in r.output  # display() printed instead of crashing


def test_a_syntax_error_in_a_notebook_names_its_cell(tmp_path):
    nb = tmp_path / "hw.ipynb"
    nb.write_text(_notebook(("code", "import numpy as np"), ("code", "x = 1\ndef f(:\n    pass")))
    r = grade_file(nb, "self_attention")
    assert r.mistakes == ["syntax_error"] and "cell 2, line 2" in r.checks[0].message


def test_check_runs_the_learners_own_function_in_process(tmp_path):
    from attnlab.grade import check

    def softmax_rows(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    ok = check(softmax_rows, seed=1)
    assert ok.passed and ok.score == 1.0 and ok.isolation == "in-process"

    def wrong(x):  # a typical edit: the softmax over the wrong axis
        e = np.exp(x - x.max(axis=0, keepdims=True))
        return e / e.sum(axis=0, keepdims=True)

    bad = check(wrong, "softmax_rows", seed=1)
    assert (
        not bad.passed and bad.mistakes == ["softmax_axis"] and "axis" in bad.hints["softmax_axis"]
    )
    assert "softmax_axis" in str(bad) and "FAILED" in str(bad)
    page = bad._repr_html_()
    assert "FAILED" in page and "<script" not in page
    path = CORPUS / "self_attention__missing_scale__no_sqrt.py"
    assert check(path, seed=1).mistakes == ["missing_scale"]  # a file works too


def test_check_on_an_untouched_starter_says_what_to_do(tmp_path):
    from attnlab.grade import check, write_starter

    r = check(write_starter("self_attention", tmp_path), seed=0)
    assert r.score == 0 and not r.passed and r.mistakes == []  # not written yet, not a crash
    assert "not written yet" in str(r) and "NotImplementedError" in str(r)
    assert "Traceback" not in str(r) and len(r.checks) == 1
    ja = check(write_starter("self_attention", tmp_path / "ja"), seed=0, lang="ja")
    assert "まだ書かれていません" in str(ja)


def test_check_names_a_notebook_cell_not_the_kernels_temporary_file():
    from attnlab.grade import check

    code = "def self_attention(X, W_Q, W_K, W_V, mask=False):\n    return X @ W_Q @ undefined\n"
    ns: dict = {}
    exec(compile(code, "/tmp/ipykernel_4242/1234567.py", "exec"), ns)  # as a kernel compiles
    r = check(ns["self_attention"], seed=0)
    assert r.mistakes == ["crash"] and 'File "<cell>", line 2' in str(r)
    assert "ipykernel_" not in str(r) and "/tmp" not in str(r)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_starters_in_each_language_parse_and_fail_cleanly_until_filled(tmp_path, lang):
    import ast
    import re

    from attnlab.cli import main
    from attnlab.grade import write_starter

    kana = re.compile(r"[\u3040-\u30ff]")
    for name in EXERCISES:
        path = write_starter(name, tmp_path / lang / f"{name}.py", lang=lang)
        text = path.read_text(encoding="utf-8")
        ast.parse(text)  # valid Python in every language
        assert f"def {name}(" in text and "TODO" in text
        assert bool(kana.search(text)) == (lang == "ja"), name  # Japanese words only under ja
    out = tmp_path / "cli" / "mine.py"
    out.parent.mkdir()
    assert main(["exercise", "start", "causal_mask", str(out), "--lang", lang]) == 0
    r = grade_file(out, seed=0)
    assert r.mistakes == [] and r.score == 0 and "not written yet" in str(r)


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_a_starter_fits_79_columns_and_its_docstring_keeps_every_word(tmp_path, lang):
    """What a learner opens in an editor or prints in a terminal: no line wider than PEP 8's
    79 columns (a CJK character takes two), and the contract's text all there, in order."""
    import ast

    from attnlab.grade import write_starter
    from attnlab.grade.starter import DOCS_JA, DOCS_ZH
    from attnlab.tables import display_width

    docs = {"ja": DOCS_JA, "zh": DOCS_ZH}.get(lang, {})
    for name, ex in EXERCISES.items():
        text = write_starter(name, tmp_path / f"{name}.py", lang=lang).read_text(encoding="utf-8")
        wide = [line for line in text.splitlines() if display_width(line) > 79]
        assert wide == [], (name, wide)
        fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef))
        said = "".join(ast.get_docstring(fn).split())
        assert said == "".join(docs.get(name, ex.doc).split()), name


def test_every_id_is_one_entry_with_hints_in_each_language_and_the_glossarys_terms():
    from attnlab.grade import variants
    from attnlab.grade.mistakes import ENTRIES, MISTAKES, STEPS

    assert len(MISTAKES) == len(ENTRIES)  # no id twice
    functions = {
        "attention": variants.attention, "softmax": variants.softmax, "mask": variants.causal,
        "heads": variants.multi_head, "projections": variants.self_attention,
        "positions": variants.positional, "additive": variants.additive,
    }  # fmt: skip
    for m in ENTRIES:
        assert m.step in STEPS and m.fix.en and m.fix.ja and m.fix.zh, m.id
        texts = [m.fix, *STEPS[m.step]]  # levels 3, 1 and 2
        assert not any(w in t.ja for t in texts for w in ("注意し", "点数", "値（V")), m.id
        assert not any("得分" in t.zh for t in texts), m.id
        for family, changes in m.versions.items():
            assert family in functions, (m.id, family)
            for c in changes:  # every keyword is one the variant function takes
                code = functions[family].__code__
                known = set(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
                extra = {"scale", "scale_at", "mask_mode", "diagonal", "upper", "fill",
                         "transpose", "weights_T", "max_over", "sum_over", "keepdims"}  # fmt: skip
                assert set(c) <= known | extra, (m.id, c)
    named = {p.stem.split("__")[1] for p in CORPUS.iterdir()} - {"pass", "fail"}
    assert named <= set(MISTAKES)


def test_an_imitated_report_is_named_beside_what_the_numbers_show():
    src = (CORPUS / "self_attention__grader_tampering__prints_passed.py").read_text()
    right = grade_source(src, "self_attention", seed=2, isolation="process")
    assert not right.passed and right.mistakes == ["grader_tampering"]
    unscaled = src.replace(" / np.sqrt(K.shape[1])", "")
    r = grade_source(unscaled, "self_attention", seed=2, isolation="process")
    assert r.mistakes == ["grader_tampering", "missing_scale"]
    clean = grade_source(
        src.replace('print("PASSED")', 'print("all my tests passed")').replace(
            'print("self_attention: 12/12 checks passed (score 1.00, seed 0)")', ""
        ),
        "self_attention",
        seed=2,
        isolation="process",
    )
    assert clean.passed  # a learner's own "passed" message is not an imitation


def test_a_forbidden_module_sought_by_any_route_is_named_and_nothing_else():
    routes = [
        'import importlib.util as u\nFOUND = u.find_spec("attn" + "lab")',
        'import importlib\ntry:\n    importlib.import_module("tor" + "ch")\nexcept ImportError:\n    pass',
        'try:\n    __import__("attn" + "lab.ref")\nexcept ImportError:\n    pass',
        "import os, numpy\nroot = os.path.dirname(os.path.dirname(numpy.__file__))\n"
        'try:\n    os.listdir(os.path.join(root, "attn" + "lab"))\nexcept OSError:\n    pass',
    ]
    fallback = "\nimport numpy as np\ndef self_attention(X, W_Q, W_K, W_V, mask=False):\n" \
        "    T = X.shape[0]\n    return np.zeros((T, W_V.shape[1])), np.zeros((T, T))\n"  # fmt: skip
    for route in routes:
        r = grade_source(route + fallback, "self_attention", seed=1, isolation="process")
        assert r.mistakes == ["forbidden_import"], (route, r.mistakes)
    literal = 'import importlib\nref = importlib.import_module("attnlab.ref")' + fallback
    r = grade_source(literal, "self_attention", seed=1, isolation="process")
    assert r.mistakes == ["forbidden_import"] and "allowed imports" in r.checks[-1].name


def test_the_graders_answers_are_pytorchs_float64_answers():
    """The grader knows the answers without torch (attnlab.ref in float64): held to PyTorch."""
    import torch

    from attnlab.oracles import sdpa_with_weights, torch_mha

    def attention(Q, K, V, mask):
        out, w = sdpa_with_weights(Q, K, V, causal=bool(mask))
        return out.numpy(), w.numpy()

    def additive(query, keys, W_q, W_k, v):
        t = [torch.from_numpy(a) for a in (query, keys, W_q, W_k, v)]
        w = torch.softmax(torch.tanh(t[0] @ t[2] + t[1] @ t[3]) @ t[4], dim=-1)
        return (w @ t[1]).numpy(), w.numpy()

    def mha(X, W_Q, W_K, W_V, W_O, h, mask=False):
        with torch.no_grad():
            out, _ = torch_mha(X[None], X[None], X[None], W_Q, W_K, W_V, W_O, h, causal=mask)
        return (out[0].numpy(),)

    oracles = {
        "scaled_dot_product_attention": lambda Q, K, V, mask=False: attention(Q, K, V, mask)[:1],
        "self_attention": lambda X, Wq, Wk, Wv, mask=False: attention(X @ Wq, X @ Wk, X @ Wv, mask),
        "multi_head_attention": mha,
        "additive_attention": additive,
    }
    for name, oracle in oracles.items():
        prep = prepared(name, 0)
        for case, want in zip(prep.cases, prep.expected, strict=True):
            args = [np.asarray(a, np.float64) for a in case.arrays.values()]
            for got, exp in zip(want, oracle(*args, *case.scalars, **case.kwargs), strict=True):
                np.testing.assert_allclose(got, exp, rtol=1e-10, atol=1e-10, err_msg=case.name)


def test_close_is_np_allclose_with_equal_nan():
    """The diagnosis's fast comparison against NumPy's own, on every pair of edge values
    (infinities, NaN, the extremes, subnormals) and on random near pairs, at each tolerance."""
    from attnlab.grade.diagnosis import close

    edges = [0.0, 1.0, -1.0, 1e-10, 1 + 1e-8, 5e-324, 1e308, -1e308, np.inf, -np.inf, np.nan]
    rng = np.random.default_rng(0)
    pairs = [(np.array([x, 0.5]), np.array([y, 0.5])) for x in edges for y in edges]
    for _ in range(300):
        a = rng.standard_normal(6) * 10.0 ** rng.integers(-12, 12)
        pairs.append((a, a * (1 + rng.standard_normal(6) * 10.0 ** rng.integers(-12, 0))))
    for a, b in pairs:
        for tol in ({}, {"rtol": 1e-3, "atol": 1e-5}, {"rtol": 1e-7, "atol": 1e-9}):
            with np.errstate(all="ignore"):
                want = np.allclose(a, b, equal_nan=True, **tol)
            assert close(a, b, **tol) == want, (a, b, tol)


def test_cases_cover_the_contract():
    """Every attention exercise is tried on each combination its contract allows: mask or
    not x (T = S, T < S, T > S, one query where the contract has keys apart) x float64 and
    float32, and large magnitudes masked and not; each case has a twin of its shapes."""

    def kind(case):
        a = case.arrays
        T = next(iter(a.values())).shape[0]
        S = a["K"].shape[0] if "K" in a else T
        rel = "1" if T == 1 else ("=" if T == S else ("<" if T < S else ">"))
        dtype = next(iter(a.values())).dtype
        return case.kwargs["mask"], rel, dtype, case.large

    relations = {
        "scaled_dot_product_attention": {"=", "<", ">", "1"},
        "self_attention": {"=", "1"},
        "multi_head_attention": {"=", "1"},
    }
    for name, rels in relations.items():
        prep = prepared(name, 3)
        seen = {kind(c) for c in prep.cases}
        for mask in (False, True):
            for rel in rels:
                for dtype in (np.float64, np.float32):
                    assert (mask, rel, np.dtype(dtype), False) in seen, (name, mask, rel, dtype)
            assert any(k[0] == mask and k[3] for k in seen), (name, mask, "large")
        twinned = set(prep.twin_of)
        assert twinned == set(range(len(prep.cases))), name


def test_the_version_table_is_checked_when_it_loads():
    """A version whose keyword no function of its family takes, or an unknown family, is an
    error at import, not a version that silently never differs."""
    from attnlab.grade.mistakes import Mistake, check_versions
    from attnlab.i18n import Text

    hint = Text("x", "x", "x")
    check_versions([Mistake("ok", "mask", hint, {"attention": [{"align": "bottom_right"}]})])
    with pytest.raises(ValueError, match="take no"):
        check_versions([Mistake("typo", "mask", hint, {"attention": [{"allign": "x"}]})])
    with pytest.raises(ValueError, match="unknown family"):
        check_versions([Mistake("fam", "mask", hint, {"atention": [{}]})])
    with pytest.raises(ValueError, match="twice"):
        check_versions([Mistake("a", "mask", hint), Mistake("a", "mask", hint)])


def test_same_inputs_twice_must_give_the_same_answer():
    """A function with randomness inside (dropout) is named random_inside by the repeated
    cases, even when a seeded generator makes it repeatable across runs of the grader."""
    from attnlab.grade.variants import attention

    calls = {"n": 0}

    def noisy(Q, K, V, mask=False):
        calls["n"] += 1
        out = attention(Q, K, V, mask)[0]
        return out * (1 + 1e-3 * np.random.default_rng(calls["n"]).standard_normal(out.shape))

    prep = prepared("scaled_dot_product_attention", 0)
    report = verdict(prep, run_in_process(noisy, [*prep.cases, *prep.twins]), [], "en")
    assert report.mistakes[0] == "random_inside", report.mistakes

    def steady(Q, K, V, mask=False):
        return attention(Q, K, V, mask)[0]

    report = verdict(prep, run_in_process(steady, [*prep.cases, *prep.twins]), [], "en")
    assert report.passed, report.mistakes
