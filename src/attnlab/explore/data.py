"""What an explorer page shows, as plain data: texts, their attention and predictions.

A *view* is one sequence's attention: the query and key tokens, the weights of every layer and
head (L, H, T, S), whether it is causal, and optionally the model's top-5 next-token guesses.
Weights travel quantised to 16 bits (1/65535 steps), only the lower triangle when causal: a
256-token text on a 6 x 6 model stays near 3 MB of page.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import UserError

TOP = 5
MAX_SNAPSHOTS = 12  # training snapshots on one page (8-bit): the page stays small enough to mail


@dataclass
class View:
    name: str
    queries: list[str]
    keys: list[str]
    weights: np.ndarray  # (L, H, T, S) in [0, 1]
    causal: bool
    step: int | None = None  # the training step of a snapshot, None for the final model
    top: list[list[tuple[str, float]]] | None = None  # per query: the TOP likeliest next tokens
    note: str = ""
    bits: int = 16  # 8 for training snapshots: many of them, looked at more coarsely

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "queries": self.queries,
            "keys": self.keys,
            "layers": int(self.weights.shape[0]),
            "heads": int(self.weights.shape[1]),
            "causal": self.causal,
            "step": self.step,
            "w": pack(self.weights, self.causal, self.bits),
            "bits": self.bits,
            "top": self.top,
            "note": self.note,
        }


def pack(weights: np.ndarray, causal: bool, bits: int = 16) -> str:
    """(L, H, T, S) weights as base64 of little-endian unsigned ints of ``bits`` (8 or 16), row
    by row; a causal matrix keeps only row t's first t + 1 entries."""
    top, dtype = (65535, "<u2") if bits == 16 else (255, "u1")
    q = np.rint(np.clip(np.asarray(weights, dtype=np.float64), 0, 1) * top).astype(dtype)
    if causal:
        T = q.shape[2]
        rows = np.tril_indices(T)
        q = q[:, :, rows[0], rows[1]]
    return base64.b64encode(q.tobytes()).decode("ascii")


def unpack(text: str, L: int, H: int, T: int, S: int, causal: bool, bits: int = 16) -> np.ndarray:
    """The inverse of ``pack`` (what the page's script computes), for tests and tools."""
    top, dtype = (65535, "<u2") if bits == 16 else (255, "u1")
    q = np.frombuffer(base64.b64decode(text), dtype=dtype).astype(np.float64) / top
    if not causal:
        return q.reshape(L, H, T, S)
    out = np.zeros((L, H, T, S))
    rows = np.tril_indices(T)
    out[:, :, rows[0], rows[1]] = q.reshape(L, H, -1)
    return out


def snapshots(run_dir: str | Path) -> list[tuple[int, dict]]:
    """The run's recorded snapshots, at most MAX_SNAPSHOTS spread evenly (first and last kept)."""
    from ..train import probes

    found = probes.load(run_dir)
    if len(found) <= MAX_SNAPSHOTS:
        return found
    keep = np.unique(np.linspace(0, len(found) - 1, MAX_SNAPSHOTS).round().astype(int))
    return [found[i] for i in keep]


def shown(token: str) -> str:
    """A token as a label: whitespace made visible."""
    return {" ": "␣", "\n": "⏎", "\t": "⇥"}.get(token, token)


# ---- runs ----------------------------------------------------------------------------------


class Run:
    """A run directory with its model loaded once: ``views(texts)`` for any texts (the
    explorer page, or each request of ``attnlab serve``), ``snapshots()`` for training.

    ``Run(run_dir)`` opens the class for the run's kind (``GPTRun``, ``Seq2SeqRun``)."""

    kind = ""
    max_len = 0

    def __new__(cls, run_dir: str | Path):
        if cls is Run:
            from ..train.rundir import read_config

            kind = read_config(run_dir)["kind"]
            if kind not in RUN_KINDS:
                raise UserError(f"{run_dir}: a {kind!r} run has no attention to explore")
            cls = RUN_KINDS[kind]
        return super().__new__(cls)

    def __init__(self, run_dir: str | Path):
        self.dir = Path(run_dir)

    def validate_text(self, text: str) -> None:
        """A text this model can read, or a UserError naming what is wrong with it."""
        if not 1 <= len(text) <= self.max_len:
            raise UserError(
                f"text {text[:20]!r}: {len(text)} characters; the model reads 1..{self.max_len}"
            )

    def default_text(self) -> str:
        """A text to show when none is given."""
        raise NotImplementedError

    def alphabet(self) -> str:
        """Every character a view of this model may show beyond those already shown (its
        vocabulary), so that a live page's font holds them; "" where it is not known."""
        return ""

    def views(self, texts: list[str]) -> list[View]:
        for text in texts:
            self.validate_text(text)
        return [self.view(text, f"{i}") for i, text in enumerate(texts, 1)]

    def snapshots(self) -> list[View]:
        """The probe text at each recorded training step (at most MAX_SNAPSHOTS)."""
        return [self.snapshot(step, snap) for step, snap in snapshots(self.dir)]

    def view(self, text: str, name: str) -> View:
        raise NotImplementedError

    def snapshot(self, step: int, snap: dict) -> View:
        raise NotImplementedError


class GPTRun(Run):
    """A character GPT: every layer's and head's causal attention, and next-token guesses."""

    kind = "gpt"

    def __init__(self, run_dir: str | Path):
        from ..train.lm import load_run

        super().__init__(run_dir)
        self.model, self.tok, cfg = load_run(run_dir)
        self.max_len = cfg["model"]["block_size"]

    def validate_text(self, text: str) -> None:
        super().validate_text(text)
        self.tok.encode(text)  # unknown characters: a UserError that names them

    def alphabet(self) -> str:
        return "".join(self.tok.chars)

    def default_text(self) -> str:
        """The start of the training probe, or the first characters of the vocabulary."""
        snaps = snapshots(self.dir)
        if snaps:
            return self.tok.decode(snaps[-1][1]["ids"][:32].tolist())
        return self.tok.chars[: min(16, self.max_len)]

    def view(self, text: str, name: str) -> View:
        """Every layer's and head's attention, and the top-5 next-character guesses."""
        import torch

        with torch.no_grad():
            logits, _, ws = self.model(torch.tensor([self.tok.encode(text)]), need_weights=True)
        w = torch.stack([x[0] for x in ws]).numpy()  # (L, H, T, T)
        p, top = logits[0].softmax(-1).topk(min(TOP, logits.shape[-1]), dim=-1)  # (T, 5) each
        guesses = [
            [
                (shown(self.tok.decode([int(t)])), round(float(v), 4))
                for t, v in zip(tr, pr, strict=True)
            ]
            for tr, pr in zip(top, p, strict=True)
        ]
        labels = [shown(c) for c in text]
        return View(name, labels, labels, w, True, top=guesses)

    def snapshot(self, step: int, snap: dict) -> View:
        labels = [shown(c) for c in self.tok.decode(snap["ids"].tolist())]
        w = snap["weights"].astype(np.float64)
        return View("probe", labels, labels, w, True, step=step, bits=8)


class Seq2SeqRun(Run):
    """A date model: each output character's alignment over the input, and its probability."""

    kind = "seq2seq"
    max_len = 64  # the longest date text a page or a request may ask about

    def __init__(self, run_dir: str | Path):
        from ..train.seq2seq import load_seq2seq

        super().__init__(run_dir)
        self.model = load_seq2seq(run_dir).eval()
        if self.model.config.attention == "none":
            raise UserError(f"{run_dir}: this model has no attention; nothing to explore")

    def default_text(self) -> str:
        """The probe date every evaluation recorded."""
        from ..train.date_task import PROBE

        return PROBE

    def view(self, text: str, name: str) -> View:
        from ..train.translate import translate

        t = translate(self.model, text)
        out = list(t.text)
        top = [[(c, round(p, 4))] for c, p in zip(out, t.char_probs, strict=True)]
        w = t.weights.numpy()[None, None]  # (1, 1, T_out, T_in)
        return View(name, out, [shown(c) for c in text], w, False, top=top, note=t.text)

    def snapshot(self, step: int, snap: dict) -> View:
        from ..train.date_task import PROBE

        out, w = [chr(c) for c in snap["output"]], snap["weights"].astype(np.float64)
        keys = [shown(c) for c in PROBE]
        return View("probe", out, keys, w[None, None], False, step, note="".join(out), bits=8)


RUN_KINDS: dict[str, type[Run]] = {"gpt": GPTRun, "seq2seq": Seq2SeqRun}
MAX_DATE = Seq2SeqRun.max_len


@dataclass
class Page:
    """Everything the page needs: the views and what kind of model made them."""

    kind: str  # "gpt" or "seq2seq"
    title: str
    views: list[View] = field(default_factory=list)


def for_run(run_dir: str | Path, texts: list[str]) -> Page:
    """The page data for a GPT or seq2seq run: each text (none: ``Run.default_text``), then the
    training snapshots."""
    run = Run(run_dir)
    texts = texts or [run.default_text()]
    return Page(run.kind, str(run_dir), run.views(texts) + run.snapshots())


__all__ = [
    "MAX_SNAPSHOTS",
    "RUN_KINDS",
    "GPTRun",
    "Page",
    "Run",
    "Seq2SeqRun",
    "View",
    "for_run",
    "pack",
    "snapshots",
    "unpack",
]
