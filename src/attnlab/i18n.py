"""The languages attnlab speaks, chosen by ``--lang`` everywhere, and a text in each of them."""

from __future__ import annotations

from dataclasses import dataclass

LANGS = ("en", "ja")
DEFAULT = "en"


@dataclass(frozen=True)
class Text:
    """One sentence in every language; ``text(lang)`` picks one (English when a language lacks it)."""

    en: str
    ja: str

    def __call__(self, lang: str) -> str:
        return self.ja if lang == "ja" else self.en
