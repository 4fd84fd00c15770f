"""``attnlab sample``: generate text from a trained GPT."""

from __future__ import annotations

import sys

from ..catalog import DEVICES
from ._args import nonneg_float, nonneg_int, positive_int, probability
from ._threads import add_threads, apply_threads

NAME = "sample"


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="generate text from a trained GPT",
        description="Stream text from the GPT in RUN_DIR, decoding with a key/value cache.",
    )
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--prompt", help="text to continue (default: a newline)")
    p.add_argument("--max-new-tokens", type=positive_int, default=500, help="tokens to write")
    p.add_argument("--temperature", type=nonneg_float, default=0.8, help="0 = greedy (default 0.8)")
    p.add_argument(
        "--top-k", type=positive_int, help="sample among the K likeliest tokens (default: all)"
    )
    p.add_argument(
        "--top-p", type=probability, help="nucleus sampling: keep this much mass (default: all)"
    )
    p.add_argument("--seed", type=nonneg_int, default=0, help="random seed")
    p.add_argument("--device", choices=DEVICES, default="cpu", help="where the model runs")
    add_threads(p)
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="re-run the whole context every token (slow; for comparison)",
    )
    p.set_defaults(run=run)


def run(a) -> int:
    import torch

    from ..train.lm import load_run
    from ..train.trainer import pick_device

    device = pick_device(a.device)
    apply_threads(a.threads)
    model, tok, _ = load_run(a.run_dir, device)
    prompt = a.prompt if a.prompt is not None else ("\n" if "\n" in tok.chars else tok.chars[0])
    idx = torch.tensor([tok.encode(prompt)], dtype=torch.long, device=device)
    gen = torch.Generator(device=device).manual_seed(a.seed)
    sys.stdout.write(prompt)
    for t in model.generate(
        idx,
        a.max_new_tokens,
        a.temperature,
        a.top_k,
        a.top_p,
        generator=gen,
        use_cache=not a.no_cache,
    ):
        sys.stdout.write(tok.decode(t.tolist()))
        sys.stdout.flush()
    sys.stdout.write("\n")
    return 0
