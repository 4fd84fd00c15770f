"""transformers, imported on first use: its absence is a one-line error naming the extra."""

from __future__ import annotations

from types import ModuleType

from ..errors import UserError


def transformers() -> ModuleType:
    """The transformers module, or a UserError saying how to install it."""
    try:
        import transformers as tf
    except ImportError:
        raise UserError("this needs Hugging Face transformers: pip install 'attnlab[hf]'") from None
    return tf
