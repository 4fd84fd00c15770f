"""Character-level text: a tokenizer for any Unicode text, corpora, and random training blocks.

The built-in corpus needs no download: CPython ships the text of its reference manual's topics
in ``pydoc_data.topics`` (about 0.8 M characters of English prose and code).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch

from ..errors import UserError
from ..files import atomic_write_text

BUILTIN = "builtin:pydoc"


@dataclass(frozen=True)
class CharTokenizer:
    """Maps each distinct character of a corpus to an id (sorted by code point)."""

    chars: str

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        if not text:
            raise UserError("cannot build a tokenizer from empty text")
        return cls("".join(sorted(set(text))))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> list[int]:
        index = self._index
        missing = sorted({c for c in text if c not in index})
        if missing:
            shown = ", ".join(repr(c) for c in missing[:10]) + (" ..." if len(missing) > 10 else "")
            raise UserError(
                f"character(s) not in the model's vocabulary of {self.vocab_size}: {shown}"
            )
        return [index[c] for c in text]

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)

    @property
    def _index(self) -> dict[str, int]:
        cache = self.__dict__.get("_cache")
        if cache is None:
            cache = {c: i for i, c in enumerate(self.chars)}
            object.__setattr__(self, "_cache", cache)
        return cache

    def save(self, path: str | Path) -> None:
        atomic_write_text(
            path, json.dumps({"type": "char", "chars": self.chars}, ensure_ascii=False)
        )

    @classmethod
    def load(cls, path: str | Path) -> CharTokenizer:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            if data.get("type") != "char" or not isinstance(data.get("chars"), str):
                raise UserError("not a char tokenizer")
        except (OSError, ValueError) as e:
            raise UserError(f"{path}: not a readable attnlab tokenizer ({e})") from None
        return cls(data["chars"])


def load_corpus(source: str | Path | None = None) -> str:
    """The text of ``source``: a UTF-8 file, or the built-in corpus for None / ``builtin:pydoc``."""
    if source is None or str(source) == BUILTIN:
        from pydoc_data.topics import topics

        return "\n\n".join(topics[k] for k in sorted(topics))
    path = Path(source)
    if path.is_dir():
        raise UserError(f"corpus {path}: a folder, expected a UTF-8 text file")
    if not path.is_file():
        raise UserError(f"corpus {path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"corpus {path}: cannot read it ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise UserError(f"corpus {path}: not UTF-8 text (byte {e.start}: {e.reason})") from None
    if len(text) < 2:
        raise UserError(f"corpus {path}: needs at least 2 characters, has {len(text)}")
    return text


@dataclass
class TokenData:
    """A corpus as ids, split 90/10 into train and validation (the split nanoGPT uses)."""

    train: torch.Tensor  # (N_train,) int64
    val: torch.Tensor  # (N_val,) int64

    @classmethod
    def from_text(cls, text: str, tokenizer: CharTokenizer, val_fraction: float = 0.1) -> TokenData:
        ids = torch.tensor(tokenizer.encode(text), dtype=torch.long)
        n = int(len(ids) * (1 - val_fraction))
        return cls(ids[:n], ids[n:])

    def check_block(self, block_size: int) -> None:
        """Both splits must hold at least one block plus its target: a UserError otherwise."""
        for split, data in (("train", self.train), ("val", self.val)):
            if len(data) <= block_size:
                raise UserError(
                    f"corpus too short: the {split} split has {len(data)} tokens, fewer than "
                    f"block_size + 1 = {block_size + 1} (use a longer text or a smaller --block-size)"
                )

    def batch(
        self, split: str, batch_size: int, block_size: int, gen: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Random blocks: x (B, T) and targets y (B, T), y shifted one to the right."""
        data = self.train if split == "train" else self.val
        if len(data) <= block_size:
            self.check_block(block_size)
        ix = torch.randint(len(data) - block_size, (batch_size,), generator=gen)
        x = torch.stack([data[i : i + block_size] for i in ix.tolist()])  # (B, T)
        y = torch.stack([data[i + 1 : i + 1 + block_size] for i in ix.tolist()])  # (B, T)
        return x, y
