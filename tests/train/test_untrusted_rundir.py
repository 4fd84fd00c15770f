"""Run directories are untrusted input: a config.json handed in, downloaded or damaged is checked
(types, bounds, and the memory its model would need) before any model is built. Each bad value
is one line naming it, exit 2, for sample, explore and serve alike."""

from __future__ import annotations

import json
import resource

import pytest

from attnlab.cli import main
from attnlab.train import rundir

GOOD = {"vocab_size": 65, "block_size": 32, "n_layer": 2, "n_head": 2, "n_embd": 32}
BAD = {
    "huge": ({**GOOD, "n_embd": 4096, "n_layer": 1000}, "would need about"),
    "wide_vocab": ({**GOOD, "vocab_size": 10**9}, "vocab_size"),
    "string": ({**GOOD, "n_layer": "4"}, "n_layer must be int"),
    "float_int": ({**GOOD, "n_head": 2.0}, "n_head must be int"),
    "bool_int": ({**GOOD, "n_layer": True}, "n_layer must be int"),
    "negative": ({**GOOD, "block_size": -1}, "block_size = -1"),
    "nan_dropout": ({**GOOD, "dropout": float("nan")}, "dropout"),
    "dropout_one": ({**GOOD, "dropout": 1.0}, "dropout"),
    "unknown": ({**GOOD, "n_embdd": 4}, "n_embdd"),
    "not_dividing": ({**GOOD, "n_head": 3}, "n_head (3) must divide n_embd (32)"),
}
SEQ2SEQ_HUGE = {"src_vocab": 50, "tgt_vocab": 50, "emb": 65536, "hidden": 65536}


def _run(tmp_path, config: object, raw: str | None = None):
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    text = raw if raw is not None else json.dumps(config)
    (run / "config.json").write_text(text)
    return run


def _one_line_error(capsys, argv: list[str], words: str) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err, err
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 200, grown_mib  # refused before a model was built


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_model_value_is_one_line_and_exit_2(tmp_path, capsys, case):
    model, words = BAD[case]
    run = _run(tmp_path, {"kind": "gpt", "model": model})
    _one_line_error(capsys, ["sample", str(run), "--max-new-tokens", "1"], words)


@pytest.mark.parametrize(
    "raw, words",
    [
        ('{"kind": "gpt", "model": ', "damaged, not JSON"),
        ("[" * 100_000, "damaged, not JSON"),
        ('["gpt"]', "expected a JSON object"),
        ('{"kind": "gpt", "model": "big"}', "'model' must be an object"),
        ('{"kind": 5, "model": {}}', "kind must be text"),
        (" " * (rundir.CONFIG_BYTES_MAX + 1), "larger than 1 MiB"),
    ],
    ids=["truncated", "deep", "list", "model_text", "kind_number", "too_large"],
)
def test_a_damaged_config_is_one_line_and_exit_2(tmp_path, capsys, raw, words):
    run = _run(tmp_path, None, raw)
    _one_line_error(capsys, ["sample", str(run)], words)


@pytest.mark.parametrize("command", [["explore"], ["serve", "--port", "0"]])
def test_explore_and_serve_refuse_the_huge_config_too(tmp_path, capsys, command):
    run = _run(tmp_path, {"kind": "gpt", "model": BAD["huge"][0]})
    _one_line_error(capsys, [command[0], str(run), *command[1:]], "would need about")
    run = _run(tmp_path, {"kind": "seq2seq", "model": SEQ2SEQ_HUGE})
    _one_line_error(capsys, [command[0], str(run), *command[1:]], "would need about")


def test_the_estimate_matches_a_real_gpt_within_a_factor_of_two():
    """The estimate is an upper bound of the same order as the parameters PyTorch allocates
    (x4 bytes, x2 for the loaded state dict)."""
    from attnlab.models.gpt import GPT, GPTConfig

    model = GPT(GPTConfig(**GOOD))
    actual = 8 * sum(p.numel() for p in model.parameters())
    estimate = rundir.model_bytes("gpt", GOOD)
    assert actual <= estimate <= 2 * actual + 4 * 32 * 32 * 2, (actual, estimate)
