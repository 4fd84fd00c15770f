"""Date normalisation with seq2seq models: the task, training runs, translation, comparison.

Uses the same ``Trainer`` as the GPT (progress bar, eval, atomic checkpoints, resume). A run
directory holds config.json, checkpoint.pt, log.jsonl and loss.png; the vocabularies are fixed
(``attnlab.data.dates``), so no tokenizer file is needed.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..config import from_dict
from ..data.dates import EOS, INPUT_CHARS, OUTPUT_CHARS, SOS, DateSplits, Vocab, examples, render
from ..errors import UserError
from ..models import ATTENTION_KINDS, Seq2Seq, Seq2SeqConfig, sequence_loss
from ..tables import display_width, text_table
from .checkpoint import load_model
from .rundir import check_out, check_same, start_run
from .trainer import TrainConfig, Trainer, TrainResult, pick_device

SRC, TGT = Vocab(INPUT_CHARS), Vocab(OUTPUT_CHARS)
OUT_LEN = 11  # "YYYY-MM-DD" + <eos>
ISO_LEN = 10  # a decoded answer is read from the first 10 steps at most
DEFAULT_TRAIN = {
    "max_iters": 3000,
    "batch_size": 64,
    "lr": 3e-3,
    "min_lr": 3e-4,
    "warmup_iters": 50,
    "weight_decay": 0.0,
    "grad_clip": 1.0,
    "eval_interval": 500,
    "eval_iters": 1,
}


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


PROBE = "Saturday 9 May 2018"  # the date whose alignment each evaluation records


class DateTask:
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
        t = translate(model, PROBE)
        w = np.zeros((0, 0)) if t.weights is None else t.weights.float().cpu().numpy()
        return {"output": np.array([ord(c) for c in t.text]), "weights": w.astype("float16")}

    def evaluate(self, model, gen, device, iters: int) -> dict[str, float]:
        batch = encode_batch(self.val, device)
        loss = self.loss(model, batch).item()
        return {"val_loss": loss, **accuracy(model, self.val, device)}


def accuracy(
    model: Seq2Seq, pairs: list[tuple[str, str]], device="cpu", chunk: int = 500
) -> dict[str, float]:
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


@dataclass
class Seq2SeqRunConfig:
    out: str = "runs/seq2seq"
    attention: str | None = None  # None: bahdanau (new run), the run's own (resume)
    model: dict = field(default_factory=dict)
    train: dict = field(default_factory=dict)
    resume: bool = False
    force: bool = False  # replace an existing run in ``out``
    progress: bool = True
    data_seed: int = 0


def _resumed(cfg: Seq2SeqRunConfig, out: Path) -> tuple[Seq2SeqConfig, TrainConfig, int]:
    saved = read_run(out)
    check_same("attention", saved["model"]["attention"], cfg.attention)
    for key, value in cfg.model.items():
        check_same(key, saved["model"].get(key), value)
    mcfg = from_dict(Seq2SeqConfig, saved["model"])
    train = TrainConfig.from_dict({**saved["train"], **cfg.train})
    return mcfg, train, saved.get("data_seed", 0)


def train_seq2seq(cfg: Seq2SeqRunConfig) -> TrainResult:
    out = Path(cfg.out)
    check_out(out, resume=cfg.resume, force=cfg.force)
    if cfg.resume:
        mcfg, train, data_seed = _resumed(cfg, out)
    else:
        kw = {"attention": cfg.attention or "bahdanau", **cfg.model}
        mcfg = from_dict(Seq2SeqConfig, {"src_vocab": len(SRC), "tgt_vocab": len(TGT), **kw})
        train = TrainConfig.from_dict({**DEFAULT_TRAIN, **cfg.train})
        data_seed = cfg.data_seed
    pick_device(train.device)
    torch.manual_seed(train.seed)
    model = Seq2Seq(mcfg)
    record = {
        "kind": "seq2seq",
        "model": mcfg.to_dict(),
        "train": train.to_dict(),
        "data_seed": data_seed,
    }
    trainer = Trainer(train, out, extra={"config": record}, progress=cfg.progress)
    task = DateTask(DateSplits.make(data_seed), data_seed)
    with start_run(out, record, force=cfg.force):
        return trainer.fit(model, task, resume=cfg.resume)


def read_run(run_dir: str | Path) -> dict:
    path = Path(run_dir) / "config.json"
    if not path.is_file():
        raise UserError(
            f"{run_dir}: not a run directory (no config.json); train one with 'attnlab train seq2seq --out {run_dir}'"
        )
    cfg = json.loads(path.read_text(encoding="utf-8"))
    if cfg.get("kind") != "seq2seq":
        raise UserError(f"{run_dir}: a {cfg.get('kind', 'gpt')!r} run, not a seq2seq run")
    return cfg


def load_seq2seq(run_dir: str | Path, device: str = "cpu") -> Seq2Seq:
    cfg = read_run(run_dir)
    return load_model(Seq2Seq(from_dict(Seq2SeqConfig, cfg["model"])), run_dir, device)


LOW_CONFIDENCE = 0.9  # below this, the weakest character of an answer is flagged


@dataclass
class Translation:
    """An answer of the date model, with how much to trust it."""

    text: str  # what the model wrote, e.g. "2018-05-09"
    weights: torch.Tensor | None  # (len(text), len(input)) alignment, None without attention
    char_probs: list[float]  # the probability the model gave each character it wrote
    problem: str | None  # why the answer is not a real ISO date, if it is not

    @property
    def confidence(self) -> float:
        """The weakest character's probability: one unsure digit makes an unsure date."""
        return min(self.char_probs) if self.char_probs else 0.0

    @property
    def low_confidence(self) -> bool:
        return self.confidence < LOW_CONFIDENCE

    def verdict(self) -> str:
        """One line: the answer, its confidence, and a mark if it is invalid or unsure."""
        line = f"{self.text}  (confidence {self.confidence:.3f})"
        if self.problem:
            return f"{line}  INVALID: {self.problem}"
        if self.low_confidence:
            return f"{line}  UNSURE: below {LOW_CONFIDENCE}; the input may not be a date"
        return line


def iso_problem(text: str) -> str | None:
    """Why ``text`` is not a valid ISO date (YYYY-MM-DD), or None if it is one."""
    import datetime as dt

    if len(text) != ISO_LEN or text[4] != "-" or text[7] != "-":
        return f"not of the form YYYY-MM-DD ({text!r})"
    try:
        dt.date.fromisoformat(text)
    except ValueError as e:
        return str(e)
    return None


def translate(model: Seq2Seq, text: str) -> Translation:
    """The ISO date for ``text``, with the alignment and the model's confidence."""
    if not text.strip():
        raise UserError("nothing to translate: the input is empty or only spaces")
    bad = sorted({c for c in text if c not in SRC.index})
    if bad:
        raise UserError(f"characters the date model has never seen: {''.join(bad)!r}")
    src, lens, _, _ = encode_batch([(text, "0000-00-00")], next(model.parameters()).device)
    pred, w, probs = model.greedy(src, lens, TGT.index[SOS], OUT_LEN, with_probs=True)
    w = None if w is None else w.cpu()
    tokens = pred[0, :ISO_LEN].tolist()
    out = TGT.decode(tokens)
    weights = None if w is None else w[0, : len(out), : len(text)]
    char_probs = [float(p) for p in probs[0, : len(out)]]
    return Translation(out, weights, char_probs, iso_problem(out))


SHADES = " ·:-=+*#%@"


def text_heatmap(weights, inp: str, out: str) -> str:
    """The alignment as characters: one row per output character, one column per input one.
    Full-width input characters (年, 月) take two terminal columns, so their cells do too."""
    cols = ["␣" if c == " " else c for c in inp]
    widths = [display_width(c) for c in cols]
    lines = ["    " + " ".join(cols)]
    for i, ch in enumerate(out):
        cells = (
            SHADES[min(len(SHADES) - 1, int(float(x) * len(SHADES)))].ljust(wd)
            for x, wd in zip(weights[i], widths, strict=True)
        )
        lines.append(f" {ch}  " + " ".join(cells))
    return "\n".join(lines)


def plot_alignment(weights, inp: str, out: str, path: str, title: str = "") -> Path:
    from ..viz import heatmap, save

    fig = heatmap(
        weights, list(out), list(inp), title=title, xlabel="input", ylabel="output", annotate=False
    )
    return save(fig, path)


# ---- comparison ------------------------------------------------------------------------------


BUCKETS = ((0, 10), (11, 15), (16, 20), (21, 25), (26, 99))


@dataclass
class S2SRow:
    attention: str
    params: int
    iters: int
    seconds: float
    exact: float
    char_acc: float
    by_length: dict[str, float]


def compare_seq2seq(
    budget_seconds: float = 60.0,
    seed: int = 0,
    progress: bool = True,
    kinds=ATTENTION_KINDS,
    n_test: int = 2000,
) -> list[S2SRow]:
    splits = DateSplits.make(seed)
    test = examples(splits.test[:n_test], seed + 2)
    task = DateTask(splits, seed, n_val=200)
    rows = []
    for kind in kinds:
        torch.manual_seed(seed)
        model = Seq2Seq(Seq2SeqConfig(len(SRC), len(TGT), attention=kind))
        train = TrainConfig.from_dict(
            {
                **DEFAULT_TRAIN,
                "max_iters": 10**9,
                "eval_interval": 10**9,
                "max_seconds": budget_seconds,
                "decay_by_time": True,  # the budget is in seconds: decay the LR over it
                "seed": seed,
            }
        )
        start = time.perf_counter()
        res = Trainer(train, None, progress=progress).fit(model, task)
        seconds = time.perf_counter() - start
        model.eval()
        acc = accuracy(model, test)
        by = {}
        for lo, hi in BUCKETS:
            part = [p for p in test if lo <= len(p[0]) <= hi]
            if part:
                by[f"{lo}-{hi}" if hi < 99 else f"{lo}+"] = accuracy(model, part)["exact_match"]
        rows.append(
            S2SRow(
                kind,
                model.num_params(),
                res.iters,
                seconds,
                acc["exact_match"],
                acc["char_acc"],
                by,
            )
        )
    return rows


def format_comparison(rows: list[S2SRow]) -> str:
    buckets = list(rows[0].by_length) if rows else []
    head = [
        "attention",
        "params",
        "iters",
        "train s",
        "exact",
        "per char",
        *[f"len {b}" for b in buckets],
    ]
    body = [
        [
            r.attention,
            f"{r.params:,}",
            str(r.iters),
            f"{r.seconds:.0f}",
            f"{100 * r.exact:.2f}%",
            f"{100 * r.char_acc:.2f}%",
            *[f"{100 * r.by_length.get(b, float('nan')):.1f}%" for b in buckets],
        ]
        for r in rows
    ]
    return (
        text_table(head, body)
        + "\n(exact match on unseen test dates, by input length in characters)"
    )
