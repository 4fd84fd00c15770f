"""NumPy reference implementations of attention (never imports torch).

Pure functions, float32 and float64, any leading batch dims; the output dtype follows the input.
Everything else in attnlab is tested against these or against torch.
"""

from .masks import causal_mask, causal_mean, padding_mask
from .multihead import merge_heads, multi_head_attention, split_heads
from .positional import rotary_embedding, sinusoidal_positional_encoding
from .scores import SCORES, score
from .sdpa import scaled_dot_product_attention, self_attention
from .softmax import softmax
from .tiled import default_block_size, merge_attention, tiled_attention, tiled_attention_backward

__all__ = [
    "SCORES",
    "causal_mask",
    "causal_mean",
    "default_block_size",
    "merge_attention",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "rotary_embedding",
    "scaled_dot_product_attention",
    "score",
    "self_attention",
    "sinusoidal_positional_encoding",
    "softmax",
    "split_heads",
    "tiled_attention",
    "tiled_attention_backward",
]
