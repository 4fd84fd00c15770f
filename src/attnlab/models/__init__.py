"""Models built from ``attnlab.nn``: a small GPT, recurrent baselines, seq2seq with attention."""

from .gpt import GPT, GPTConfig, sample_next
from .rnn import CharRNN, RNNConfig
from .seq2seq import ATTENTION_KINDS, Seq2Seq, Seq2SeqConfig, sequence_loss

__all__ = [
    "ATTENTION_KINDS",
    "GPT",
    "CharRNN",
    "GPTConfig",
    "RNNConfig",
    "Seq2Seq",
    "Seq2SeqConfig",
    "sample_next",
    "sequence_loss",
]
