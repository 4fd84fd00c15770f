"""An attnlab GPT run as a GPT-2 model folder (``attnlab export-hf RUN_DIR OUT``).

attnlab's GPT is GPT-2's architecture with three choices to translate: nn.Linear weights are
GPT-2's Conv1D weights transposed; grouped-query key/value heads are repeated for their query
heads (the same function, as GPT-2 has no GQA); and the MLP's exact GELU is GPT-2's ``"gelu"``
(not its default tanh approximation). Positions must be learned or sinusoidal (a sinusoidal
table becomes GPT-2's position embedding); rotary positions have no GPT-2 form and are refused.
Models without biases get zero biases. The character tokenizer becomes a ``tokenizers``
word-level tokenizer over single characters, so ``AutoTokenizer`` gives attnlab's ids.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import Tensor

from ..errors import UserError
from ._need import transformers


def _gpt2_config(cfg, tf):
    return tf.GPT2Config(
        vocab_size=cfg.vocab_size,
        n_positions=cfg.block_size,
        n_embd=cfg.n_embd,
        n_layer=cfg.n_layer,
        n_head=cfg.n_head,
        activation_function="gelu",  # attnlab's MLP uses the exact GELU
        resid_pdrop=cfg.dropout,
        embd_pdrop=cfg.dropout,
        attn_pdrop=cfg.dropout,
        layer_norm_epsilon=1e-5,  # nn.LayerNorm's
        bos_token_id=None,
        eos_token_id=None,
        tie_word_embeddings=True,
    )


def _qkv(attn, n_head: int) -> tuple[Tensor, Tensor]:
    """in_proj (d + 2 Hkv D, d) and bias -> GPT-2's c_attn weight (d, 3d) and bias (3d,), the
    key/value heads repeated for their query groups."""
    p = attn.projections()
    D, Hkv = attn.d_k, attn.num_kv_heads
    parts_w, parts_b = [p["q"][0]], [p["q"][1]]
    for name in ("k", "v"):
        w, b = p[name]
        parts_w.append(
            w.view(Hkv, D, -1).repeat_interleave(n_head // Hkv, 0).reshape(-1, w.shape[1])
        )
        if b is not None:
            b = b.view(Hkv, D).repeat_interleave(n_head // Hkv, 0).reshape(-1)
        parts_b.append(b)
    weight = torch.cat(parts_w, 0)  # (3d, d)
    bias = None if parts_b[0] is None else torch.cat(parts_b, 0)
    return weight.t(), bias


def _state(model) -> dict[str, Tensor]:
    """attnlab GPT's weights under GPT-2's names and layouts."""
    from ..nn import LearnedPositionalEmbedding

    cfg = model.config
    C = cfg.n_embd
    if model.wpe is None:
        raise UserError(
            "export-hf: rotary positions have no GPT-2 form (use learned or sinusoidal)"
        )
    if isinstance(model.wpe, LearnedPositionalEmbedding):
        wpe = model.wpe.emb.weight
    else:
        wpe = model.wpe.table(cfg.block_size)
    zeros = torch.zeros
    sd = {"transformer.wte.weight": model.wte.weight, "transformer.wpe.weight": wpe}

    def ln(prefix: str, m) -> None:
        sd[f"{prefix}.weight"] = m.weight
        sd[f"{prefix}.bias"] = m.bias if m.bias is not None else zeros(C)

    def conv(prefix: str, weight_t: Tensor, bias: Tensor | None) -> None:
        sd[f"{prefix}.weight"] = weight_t  # Conv1D: (in, out)
        sd[f"{prefix}.bias"] = bias if bias is not None else zeros(weight_t.shape[1])

    for i, b in enumerate(model.blocks):
        h = f"transformer.h.{i}"
        ln(f"{h}.ln_1", b.ln_1)
        conv(f"{h}.attn.c_attn", *_qkv(b.attn, cfg.n_head))
        conv(f"{h}.attn.c_proj", b.attn.out_proj.weight.t(), b.attn.out_proj.bias)
        ln(f"{h}.ln_2", b.ln_2)
        conv(f"{h}.mlp.c_fc", b.mlp.fc.weight.t(), b.mlp.fc.bias)
        conv(f"{h}.mlp.c_proj", b.mlp.proj.weight.t(), b.mlp.proj.bias)
    ln("transformer.ln_f", model.ln_f)
    sd["lm_head.weight"] = model.wte.weight
    return {k: v.detach().clone().contiguous() for k, v in sd.items()}


def _tokenizer(chars: list[str]):
    """attnlab's CharTokenizer as a fast tokenizer: one token per character, the same ids,
    decoding by plain concatenation."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    tf = transformers()
    vocab = {c: i for i, c in enumerate(chars)}
    tk = Tokenizer(models.WordLevel(vocab, unk_token=None))
    tk.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tk.decoder = decoders.Fuse()
    return tf.PreTrainedTokenizerFast(tokenizer_object=tk, clean_up_tokenization_spaces=False)


def export_gpt2(run_dir: str | Path, out: str | Path) -> Path:
    """Write the GPT of ``run_dir`` as a GPT-2 folder (config, weights, tokenizer) in ``out``;
    ``GPT2LMHeadModel.from_pretrained(out)`` gives the same logits."""
    tf = transformers()
    from ..models import GPT
    from ..train.lm import load_run

    model, tok, _ = load_run(run_dir)
    if not isinstance(model, GPT):
        raise UserError(f"export-hf: {run_dir} is not a GPT run")
    hf = tf.GPT2LMHeadModel(_gpt2_config(model.config, tf))
    missing, unexpected = hf.load_state_dict(_state(model), strict=False)
    left = [k for k in missing if not k.endswith("attn.bias") and "masked_bias" not in k]
    if left or unexpected:
        raise RuntimeError(f"GPT-2 weights left unset: {left}, unknown: {unexpected}")
    out = Path(out)
    hf.eval().save_pretrained(out)
    _tokenizer(tok.chars).save_pretrained(out)
    return out
