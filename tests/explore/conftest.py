"""Two small trained runs, made once for the explorer tests: a GPT and a date model.

With ATTNLAB_DOCS_SHOTS=1 (the README's screenshots) they train longer, so that the pictures show
attention that has formed; the tests read every number from the runs either way."""

import os
import threading

import pytest

from attnlab.train.lm import LMRunConfig, train_lm
from attnlab.train.seq2seq import Seq2SeqRunConfig, train_seq2seq

EVIL = "</script><img src=x onerror=alert(1)>"
LONGER = 15 if os.environ.get("ATTNLAB_DOCS_SHOTS") == "1" else 1


@pytest.fixture(scope="session")
def gpt_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("explore") / "gpt"
    model = {"block_size": 64, "n_layer": 2, "n_head": 2, "n_embd": 32}
    train = {
        "max_iters": 40 * LONGER,
        "eval_interval": 20 * LONGER,
        "eval_iters": 2,
        "batch_size": 8,
    }
    train_lm(LMRunConfig(out=str(out), model=model, train=train, progress=False))
    return out


@pytest.fixture(scope="session")
def date_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("explore") / "date"
    model = {"hidden": 16, "emb": 8, "attn_hidden": 8}
    # 40 steps: a model that writes a whole date to step through (on 20 it wrote 3 characters);
    # the README's screenshots train 1,500
    steps = 1500 if LONGER > 1 else 40
    train = {"max_iters": steps, "eval_interval": steps // 2, "batch_size": 16}
    train_seq2seq(
        Seq2SeqRunConfig(
            out=str(out), attention="bahdanau", model=model, train=train, progress=False
        )
    )
    return out


@pytest.fixture(scope="module")
def served(gpt_run):
    """``attnlab serve`` of the GPT run on 127.0.0.1, any free port, in a thread."""
    from attnlab.explore.serve import make_server

    server = make_server(gpt_run, port=0, texts=["ROMEO:"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()
