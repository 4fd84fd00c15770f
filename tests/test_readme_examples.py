"""The README's Python examples (each ```python block after an ``<!-- example: python -->``
line) run here, in order, in one namespace, in a folder that holds the run they load: an
example that stops working fails this test instead of misleading a reader."""

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _examples() -> list[str]:
    text = README.read_text(encoding="utf-8")
    return re.findall(r"<!-- example: python -->\n```python\n(.*?)```", text, flags=re.S)


def test_the_readme_python_examples_run(tmp_path, monkeypatch):
    if not README.exists():
        pytest.skip("README.md is not beside the tests (an installed copy)")
    from attnlab.train.lm import LMRunConfig, train_lm

    blocks = _examples()
    assert len(blocks) >= 2
    small = {"block_size": 16, "n_layer": 2, "n_head": 2, "n_embd": 16}
    train = {"max_iters": 3, "batch_size": 4, "eval_iters": 1, "eval_interval": 10}
    train_lm(LMRunConfig(out=str(tmp_path / "runs" / "gpt"), model=small, train=train,
                         progress=False))  # fmt: skip
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    namespace: dict = {}
    with contextlib.redirect_stdout(out):
        for block in blocks:
            exec(compile(block, "README.md", "exec"), namespace)
    printed = out.getvalue().splitlines()
    gap = float(printed[0].removeprefix("cached vs full: "))
    assert gap < 1e-5  # the cached decode equals the full forward pass
    assert printed[1].startswith("def ") and len(printed[1]) > 4
    assert printed[-1] == f"2 layers, {namespace['model'].num_params()} parameters"
    assert namespace["weights"].shape == (2, 8, 10, 10)
