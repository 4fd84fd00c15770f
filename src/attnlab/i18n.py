"""The languages attnlab speaks, chosen by ``--lang`` everywhere, and a text in each of them."""

from __future__ import annotations

from dataclasses import dataclass

LANGS = ("en", "ja", "zh")
DEFAULT = "en"


@dataclass(frozen=True)
class Text:
    """One sentence in every language; ``text(lang)`` picks one (English for an unknown one)."""

    en: str
    ja: str
    zh: str

    def __call__(self, lang: str) -> str:
        return getattr(self, lang) if lang in LANGS else self.en
