"""NumPy reference implementations of attention (never imports torch).

Pure functions, float32 and float64, any leading batch dims; the output dtype follows the input.
Everything else in attnlab is tested against these or against torch.
"""

from .alibi import alibi_bias, alibi_slopes
from .masks import causal_mask, causal_mean, padding_mask
from .multihead import merge_heads, multi_head_attention, split_heads
from .positional import rotary_embedding, sinusoidal_positional_encoding
from .scores import SCORES, score
from .sdpa import scaled_dot_product_attention, self_attention
from .softmax import softmax
from .tiled import default_block_size, merge_attention, tiled_attention, tiled_attention_backward
from .variants import variant_attention
from .windows import causal_lower_right, length_mask, sliding_window_mask

__all__ = [
    "SCORES",
    "alibi_bias",
    "alibi_slopes",
    "causal_lower_right",
    "causal_mask",
    "causal_mean",
    "default_block_size",
    "length_mask",
    "merge_attention",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "rotary_embedding",
    "scaled_dot_product_attention",
    "score",
    "self_attention",
    "sinusoidal_positional_encoding",
    "sliding_window_mask",
    "softmax",
    "split_heads",
    "tiled_attention",
    "tiled_attention_backward",
    "variant_attention",
]
