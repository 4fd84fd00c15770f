"""attnlab where Hugging Face users work (the optional extra ``attnlab[hf]``), offline.

- ``attention``: attnlab's attention as a transformers attention implementation
  (``register``), and a learner's own NumPy function as one (``register_learner``)
- ``explore``: a local transformers model folder's attention as an explorer page
- ``export``: an attnlab GPT run as a GPT-2 model folder with the same logits

The only package that imports transformers, and only when one of these is called.
"""

from .attention import attnlab_attention, learner_attention, register, register_learner
from .explore import explore_hf, hf_page
from .export import export_gpt2

__all__ = [
    "attnlab_attention",
    "explore_hf",
    "export_gpt2",
    "hf_page",
    "learner_attention",
    "register",
    "register_learner",
]
