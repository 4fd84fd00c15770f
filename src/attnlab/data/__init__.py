"""Data: a char tokenizer, text corpora and batching; the date-normalisation generator."""

from .text import BUILTIN, CharTokenizer, TokenData, load_corpus

__all__ = ["BUILTIN", "CharTokenizer", "TokenData", "load_corpus"]
