"""A local transformers model folder's attention as an explorer page (bertviz's job, offline).

The model is loaded from its folder only (``local_files_only``: nothing is downloaded) with
eager attention, so ``output_attentions`` returns every layer's weights ``(B, H, T, S)``; the
text is split by the folder's own tokenizer. A causal language model (its config names a
``...ForCausalLM`` or ``...LMHeadModel`` architecture) shows causal attention and its top-5
next-token guesses at each position; any other model (an encoder such as BERT) shows its base
model's full attention.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import UserError
from ..explore.data import TOP, Page, View, shown
from ._need import transformers

MAX_TOKENS = 512  # a longer text makes a page too large to open comfortably


def _load(model_dir: Path):
    """(model in eval mode, tokenizer, whether it predicts tokens) from a local folder;
    transformers' loading bars stay off (a command prints one line)."""
    logging = transformers().utils.logging
    was_on = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        return _load_quietly(model_dir)
    finally:
        if was_on:
            logging.enable_progress_bar()


def _load_quietly(model_dir: Path):
    tf = transformers()
    if not (model_dir / "config.json").is_file():
        raise UserError(
            f"--hf {model_dir}: no config.json there; expected a transformers model folder"
        )
    kw = {"local_files_only": True, "attn_implementation": "eager"}
    try:
        tok = tf.AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        config = tf.AutoConfig.from_pretrained(model_dir, local_files_only=True)
    except (OSError, ValueError) as e:
        raise UserError(f"--hf {model_dir}: cannot load its tokenizer or config ({e})") from None
    if getattr(config, "is_encoder_decoder", False):
        raise UserError(
            f"--hf {model_dir}: an encoder-decoder model ({config.model_type}); explore --hf "
            "shows decoder-only and encoder-only models"
        )
    archs = config.architectures or []
    lm = any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs)  # a decoder LM
    auto = tf.AutoModelForCausalLM if lm else tf.AutoModel  # else its encoder's attention
    try:
        model = auto.from_pretrained(model_dir, **kw)
    except (OSError, ValueError) as e:
        raise UserError(f"--hf {model_dir}: cannot load the model ({e})") from None
    return model.eval(), tok, lm


def _view(model, tok, lm: bool, causal: bool, text: str, name: str) -> View:
    import torch

    ids = tok(text, return_tensors="pt")["input_ids"]  # (1, T)
    if not 1 <= ids.shape[1] <= MAX_TOKENS:
        raise UserError(f"text {text[:20]!r}: {ids.shape[1]} tokens; expected 1..{MAX_TOKENS}")
    with torch.no_grad():
        out = model(input_ids=ids, output_attentions=True)
    w = torch.stack([a[0] for a in out.attentions]).float().numpy()  # (L, H, T, T)
    labels = [shown(tok.decode([int(i)])) for i in ids[0]]
    top = None
    if lm:
        p, best = out.logits[0].softmax(-1).topk(TOP, dim=-1)  # (T, TOP) each
        top = [
            [(shown(tok.decode([int(t)])), round(float(v), 4)) for t, v in zip(tr, pr, strict=True)]
            for tr, pr in zip(best, p, strict=True)
        ]
    return View(name, labels, labels, np.asarray(w, dtype=np.float64), causal, top=top)


def hf_page(model_dir: str | Path, texts: list[str]) -> Page:
    """The explorer page data for each text through the model in ``model_dir``."""
    model_dir = Path(model_dir)
    if not texts:
        raise UserError("--hf needs at least one --text")
    model, tok, lm = _load(model_dir)
    causal = lm or bool(getattr(model.config, "is_decoder", False))
    views = [_view(model, tok, lm, causal, text, str(i)) for i, text in enumerate(texts, 1)]
    return Page("gpt", f"{model_dir} ({model.config.model_type})", views)


def explore_hf(model_dir: str | Path, texts: str | list[str], *, lang: str = "en"):
    """The explorer page (``attnlab.explore.Explorer``: ``.save(path)``, shown inline in
    Jupyter) for ``texts`` through the model in ``model_dir``."""
    from ..explore import page
    from ..explore.explorer import Explorer

    texts = [texts] if isinstance(texts, str) else list(texts)
    return Explorer(page.model_page(hf_page(model_dir, texts), lang))
