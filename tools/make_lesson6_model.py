"""Remake the GPT that lesson 6 analyses (``attnlab/lessons/content/lesson6/gpt.pt``).

Lesson 6 trains a GPT live for a short curve; its sample, perplexity and heads come from this
file: the same model (the lesson's config) from the same seed, trained for more steps on one
thread, so the file is the same on any machine of the same kind. Run from the repository root:

    python tools/make_lesson6_model.py            # about 2-3 minutes of one idle CPU core

It prints the validation loss and writes the weights (float32, a few hundred kB) with the
config and the steps, loadable with ``torch.load(..., weights_only=True)``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from attnlab.data import CharTokenizer, TokenData, load_corpus
from attnlab.models import GPT, GPTConfig
from attnlab.train import LMTask, TrainConfig, Trainer

OUT = Path(__file__).resolve().parents[1] / "src/attnlab/lessons/content/lesson6/gpt.pt"
BLOCK = 64  # as lesson 6's setup
SEED = 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args()
    torch.set_num_threads(1)
    text = load_corpus()
    tok = CharTokenizer.from_text(text)
    data = TokenData.from_text(text, tok)
    cfg = GPTConfig(vocab_size=tok.vocab_size, block_size=BLOCK, n_layer=2, n_head=4, n_embd=64)
    torch.manual_seed(SEED)
    model = GPT(cfg)
    train = TrainConfig(
        max_iters=a.steps,
        batch_size=32,
        lr=3e-3,
        min_lr=3e-4,
        warmup_iters=100,
        eval_interval=a.steps // 4,
        eval_iters=16,
        log_interval=10**9,
        seed=SEED,
    )
    t, c = time.perf_counter(), time.process_time()
    result = Trainer(train, None, progress=False).fit(model, LMTask(data, BLOCK))
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    losses = [round(e["val_loss"], 3) for e in result.evals]
    print(f"{a.steps} steps, {wall:.0f} s ({cpu:.0f} s of CPU); val loss {losses}")
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    saved = {"config": cfg.to_dict(), "steps": a.steps, "seed": SEED, "model": state}
    saved["val_loss"] = result.evals[-1]["val_loss"]
    torch.save(saved, a.out)
    print(f"wrote {a.out} ({a.out.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
