"""The two lessons that train: 6 (a GPT and the RNN table) and 7 (seq2seq with and without
attention). Each runs in every language on a budget of a fraction of a second per model,
quotes the numbers its run computed, and what it trains learns."""

import io
import json
import re
import tokenize

import numpy as np
import pytest
import torch

from attnlab.lessons import runner, source
from attnlab.tables import display_width
from helpers import SHORT_BUDGET, SHORT_TEST, lesson_run

LANGS = ["en", "ja", "zh"]


@pytest.fixture(scope="module")
def ran():
    """Each (lesson, language) run at most once per process, on ``helpers.SHORT_BUDGET`` (the
    runs tests/lessons/test_lessons.py reads as well: conftest keeps a lesson's tests together)."""
    threads = torch.get_num_threads()
    yield lesson_run
    torch.set_num_threads(threads)  # the lessons train on one thread


def _flat(text: str) -> str:
    """The text with every run of whitespace one space: prose may be rewrapped."""
    return " ".join(text.split())


def _by_id(number: int, results: dict) -> dict:
    """What each step assigned, by step id."""
    return {cell.id: results[k] for k, cell in enumerate(runner.steps(number), 1)}


def test_the_setup_cells_have_a_budget_in_seconds():
    for number in (6, 7):
        setup = source.cells(number)[0].code
        assert re.search(r"^BUDGET = \d+  # seconds of training", setup, re.M)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("number", [6, 7])
def test_runs_in_every_language_with_every_number_filled_in(ran, number, lang):
    text, results = ran(number, lang)
    words = source.prose(number, lang)
    steps = runner.steps(number)
    assert len(results) == len(steps) and steps[-1].id == "recap"
    for cell in steps:
        assert words.titles[cell.id] in text
    assert f"BUDGET = {SHORT_BUDGET}" in text  # the setup shown is the one that ran
    recap = words.texts["recap"]
    assert recap.startswith("|") and recap.count("\n") >= 4  # a table


@pytest.mark.lesson(6)
def test_lesson6_block_masks_and_training(ran):
    text, results = ran(6, "en")
    r = _by_id(6, results)
    block = r["block"]
    assert block["ln_mean"] < 1e-5 and abs(block["ln_std"] - 1) < 1e-3
    assert block["same_as_gpt"] < 1e-5  # the hand-built block is the GPT's block
    assert block["grad_res"] > 5 * block["grad_plain"]  # the residual path carries the gradient
    mixed = r["encoder_decoder"]
    assert mixed["moved_enc"] == 8 and mixed["moved_dec"] == 1  # only the last position moves
    trained = r["train_gpt"]
    assert trained["steps"] >= 1 and trained["last"] < trained["first"]  # the loss fell
    assert f"loss went from {trained['first']:.3f} to {trained['last']:.3f}" in _flat(text)
    ppl = r["perplexity"]
    assert ppl["ppl_final"] == pytest.approx(np.exp(trained["last"]))
    assert f"{ppl['ppl_final']:.2f}" in text
    assert ppl["ppl_unigram"] < ppl["ppl_uniform"]  # frequencies beat a uniform guess
    temp = r["temperature"]
    assert temp["top_low"] > temp["top_high"] and temp["ent_low"] < temp["ent_high"]
    assert len(temp["samples"]) == 4 and all(s.startswith("The ") for s in temp["samples"].values())
    table = r["rnn_table"]
    assert set(table["ppls"]) == {"gpt", "rnn", "lstm", "gru"}
    for kind, value in table["ppls"].items():
        assert f"{value:.2f}" in text, kind
        assert table["measured"][kind]["steps"] >= 1
    assert table["best"] == min(table["ppls"], key=table["ppls"].get)
    for kind, share in table["reach"].items():  # BPTT: the gradient that reaches 32 steps back
        assert 0 < share < 1e3 and f"{share:.1e} in the {kind.upper()}" in _flat(text)


@pytest.mark.lesson(7)
def test_lesson7_seq2seq_compares_and_aligns(ran):
    text, results = ran(7, "en")
    r = _by_id(7, results)
    assert r["teacher_forcing"]["loss0"] == pytest.approx(np.log(13), abs=0.3)  # uniform-ish
    trained = r["train_seq2seq"]["results"]
    assert set(trained) == {"none", "bahdanau", "luong-general"}
    assert all(res.iters >= 1 for res in trained.values())
    exact = r["compare_attention"]["exact"]
    assert all(0 <= v <= 1 for v in exact.values())
    assert f"no attention {exact['none']:.1%}" in _flat(text)
    b = r["bottleneck"]
    assert r["compare_attention"]["n_test"] == SHORT_TEST  # N_TEST, as the test set it
    assert sum(b["sizes"]) == SHORT_TEST and min(b["sizes"]) > 0
    for kind, acc in b["by_length"].items():  # the buckets' share-weighted mean is the total
        assert np.dot(acc, b["sizes"]) / SHORT_TEST == pytest.approx(exact[kind])
    assert b["len_long"] > 1.5 * b["len_short"]  # the same dates, written short and long
    for kind, (short, long) in b["short_long"].items():
        assert f"{short:.1%} to {long:.1%}" in _flat(text), kind
    for kind, w in r["alignment"]["alignments"].items():  # (output, input) weights
        assert w.shape[1] == len("Saturday 9 May 2018") and 1 <= w.shape[0] <= 10, kind
        np.testing.assert_allclose(w.sum(1), 1, atol=1e-5)
    share = r["alignment"]["on_year"]["bahdanau"]
    assert 0 <= share <= 1 and f"{share:.0%} of its weight" in _flat(text)


def _value(number: int, kind: str, ident: str, name: str):
    """What a cell of an exercise assigns to ``name``, run after the setup alone: the
    exercises use no trained model, so their answers are the same for any budget."""
    ns: dict = {}
    exec(compile(source.cells(number)[0].code, "setup", "exec"), ns)
    cells = runner.exercises(number) if kind == "exercise" else runner.part(number, kind, ident)
    cell = next(c for c in cells if c.id == ident)
    exec(compile(cell.code, kind, "exec"), ns)
    return np.asarray(ns[name], dtype=float)


def test_the_worked_answers_against_the_formulas():
    losses = np.array([2.1, 0.4, 1.3, 3.0, 0.9])
    assert _value(6, "solution", "ppl_from_losses", "ppl_ex") == pytest.approx(
        np.exp(losses.mean())
    )
    assert _value(6, "mistake", "ppl_from_losses", "ppl_ex") > np.exp(losses.mean())  # Jensen
    e = np.exp(np.array([2.0, 1.0, 0.5, -1.0]) / 0.5)
    np.testing.assert_allclose(_value(6, "solution", "sharpen", "probs_ex"), e / e.sum(), rtol=1e-6)
    start = _value(6, "exercise", "sharpen", "probs_ex")
    assert start.max() < (e / e.sum()).max()  # the starting code is not yet sharp
    ids = _value(7, "solution", "teacher_forcing_input", "decoder_input")
    assert len(ids) == 11 and ids[0] == 1  # <sos> then the ten characters, no <eos>


@pytest.mark.parametrize("number", [6, 7])
def test_prose_fits_100_columns_and_every_comment_is_translated(number):
    folder = source._content(number)
    for lang in LANGS:
        lines = (folder / f"{lang}.md").read_text(encoding="utf-8").splitlines()
        assert max(display_width(line) for line in lines) <= 100, lang
    code = (folder / "code.py").read_text(encoding="utf-8")
    code = code[code.index("# %% setup") :]
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    comments = {t.string[1:].strip() for t in tokens if t.type == tokenize.COMMENT}
    comments = {c for c in comments if not c.startswith("%%")}
    for lang in ("ja", "zh"):
        catalogue = json.loads((folder / f"comments.{lang}.json").read_text(encoding="utf-8"))
        assert catalogue.keys() == comments, lang  # every comment, and no stale one
        words = (re.sub(r"\([^()]*\)|\S*[\d_.]\S*", "", k) for k in catalogue)  # not shapes
        worded = [
            v for w, v in zip(words, catalogue.values(), strict=True) if re.search("[a-z]{4}", w)
        ]
        assert all(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", v) for v in worded), lang


@pytest.mark.parametrize("number", [6, 7])
def test_every_wrong_quiz_choice_says_why_in_every_language(number):
    shapes = []
    for lang in LANGS:
        quiz = (source._content(number) / f"{lang}.md").read_text(encoding="utf-8")
        quiz = quiz.split("\n## quiz\n", 1)[1]
        shape = []
        for block in re.split(r"^### ", quiz, flags=re.M)[1:]:
            lines = block.splitlines()
            answer = next(line[7:].strip() for line in lines if line.startswith("answer:"))
            for i, line in enumerate(lines):
                if m := re.match(r"^- ([a-z])\) ", line):
                    has_why = i + 1 < len(lines) and lines[i + 1].startswith("  why: ")
                    assert has_why == (m.group(1) != answer), (lang, line)
                    shape.append((m.group(1), has_why))
        shapes.append(shape)
    assert shapes[0] == shapes[1] == shapes[2] and len(shapes[0]) >= 9
