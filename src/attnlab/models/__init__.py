"""Models built from ``attnlab.nn``: a small GPT, recurrent baselines, seq2seq with attention."""

from .gpt import GPT, GPTConfig, sample_next

__all__ = ["GPT", "GPTConfig", "sample_next"]
