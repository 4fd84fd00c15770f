"""The date normalisation task for the trainer: encoding, batches, evaluation, greedy decoding.

Any date text ("Saturday 9 May 2018", "2018年5月9日") to its ISO form ("2018-05-09"). The
vocabularies are fixed (``attnlab.data.dates``), so a run needs no tokenizer file.
"""

from __future__ import annotations

import random

import numpy as np
import torch
from torch import nn

from ..data.dates import EOS, INPUT_CHARS, OUTPUT_CHARS, SOS, DateSplits, Vocab, examples, render
from ..models import Seq2Seq, sequence_loss

SRC, TGT = Vocab(INPUT_CHARS), Vocab(OUTPUT_CHARS)
OUT_LEN = 11  # "YYYY-MM-DD" + <eos>
ISO_LEN = 10  # a decoded answer is read from the first 10 steps at most
PROBE = "Saturday 9 May 2018"  # the date whose alignment each evaluation records


def encode_batch(pairs: list[tuple[str, str]], device: torch.device | str = "cpu"):
    """(src (B, S), src_len (B,), tgt_in (B, 11), tgt_out (B, 11)) from (text, iso) pairs."""
    srcs = [SRC.encode(x) for x, _ in pairs]
    S = max(len(s) for s in srcs)
    src = torch.zeros(len(pairs), S, dtype=torch.long)
    for i, s in enumerate(srcs):
        src[i, : len(s)] = torch.tensor(s)
    tgt = torch.tensor([TGT.encode(SOS + y + EOS) for _, y in pairs])  # (B, 12)
    lens = torch.tensor([len(s) for s in srcs])
    return src.to(device), lens.to(device), tgt[:, :-1].to(device), tgt[:, 1:].to(device)


def decode(model: Seq2Seq, text: str) -> tuple[str, torch.Tensor | None, list[float]]:
    """Greedy answer for one (valid) text: the output, its alignment (len(out), len(text)) on the
    CPU (None without attention), and the probability of each output character."""
    src, lens, _, _ = encode_batch([(text, "0000-00-00")], next(model.parameters()).device)
    pred, w, probs = model.greedy(src, lens, TGT.index[SOS], OUT_LEN, with_probs=True)
    out = TGT.decode(pred[0, :ISO_LEN].tolist())
    weights = None if w is None else w.cpu()[0, : len(out), : len(text)]
    return out, weights, [float(p) for p in probs[0, : len(out)]]


class DateTask:
    """The trainer's task for dates: batches of generated (human date, ISO date) pairs,
    the loss of a ``Seq2Seq`` on them, exact-match and per-character evaluation on held-out
    dates, and the attention on a probe date for the explorer."""

    def __init__(self, splits: DateSplits, seed: int = 0, n_val: int = 1000):
        self.splits = splits
        self.val = examples(splits.val[:n_val], seed + 1)

    def train_batch(self, gen: torch.Generator, batch_size: int, device):
        seed = int(torch.randint(2**31 - 1, (1,), generator=gen))  # the generator drives everything
        rng = random.Random(seed)
        pairs = [
            (render(d, rng), d.isoformat()) for d in rng.choices(self.splits.train, k=batch_size)
        ]
        return encode_batch(pairs, device)

    @staticmethod
    def loss(model: nn.Module, batch) -> torch.Tensor:
        """Teacher-forced loss; a static method, so DDP tests can call it without a task."""
        src, src_len, tgt_in, tgt_out = batch
        logits, _ = model(src, src_len, tgt_in)  # through forward, so a DDP wrapper syncs grads
        return sequence_loss(logits, tgt_out)

    def tokens(self, batch) -> int:
        return int((batch[3] != 0).sum())

    @staticmethod
    def probe(model, device) -> dict:
        """The alignment on the probe date: output characters (code points) and weights
        (T_out, T_in) float16 (none for a model without attention)."""
        out, weights, _ = decode(model, PROBE)
        w = np.zeros((0, 0)) if weights is None else weights.float().numpy()
        return {"output": np.array([ord(c) for c in out]), "weights": w.astype("float16")}

    def evaluate(self, model, gen, device, iters: int) -> dict[str, float]:
        batch = encode_batch(self.val, device)
        loss = self.loss(model, batch).item()
        return {"val_loss": loss, **accuracy(model, self.val, device)}


def accuracy(
    model: Seq2Seq, pairs: list[tuple[str, str]], device="cpu", chunk: int = 500
) -> dict[str, float]:
    """Exact-match and per-character accuracy of greedy answers on (text, iso) pairs."""
    exact = chars = 0
    for i in range(0, len(pairs), chunk):
        part = pairs[i : i + chunk]
        src, lens, _, _ = encode_batch(part, device)
        pred, _ = model.greedy(src, lens, TGT.index[SOS], OUT_LEN)
        for p, (_, y) in zip(pred.tolist(), part, strict=True):
            text = TGT.decode(p[:ISO_LEN])
            exact += text == y
            chars += sum(a == b for a, b in zip(text.ljust(10), y, strict=False))
    return {"exact_match": exact / len(pairs), "char_acc": chars / (10 * len(pairs))}
