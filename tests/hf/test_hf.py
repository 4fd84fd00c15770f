"""attnlab and Hugging Face transformers, offline: tiny randomly initialised models built
here (nothing downloaded), with a character tokenizer built here too. Skipped when
transformers is absent, except under CI=true, where the dev extra must have installed it."""

import importlib.util
import json
import os
import re

import numpy as np
import pytest
import torch

from attnlab.cli import main

if os.environ.get("CI") != "true" and importlib.util.find_spec("transformers") is None:
    pytest.skip("transformers is not installed (attnlab[hf])", allow_module_level=True)


class _Transformers:
    """transformers, imported when a test first reads from it: its import takes about a
    second, which collection would otherwise spend on every worker, most running none of
    these tests."""

    def __getattr__(self, name: str):
        if name.startswith("_"):  # pytest's look at each name of the module, not a test's
            raise AttributeError(name)
        import transformers

        return getattr(transformers, name)


tf = _Transformers()

CHARS = list("abcdefghij .,\n")


def _tokenizer():
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(CHARS)}
    tk = Tokenizer(models.WordLevel(vocab, unk_token=None))
    tk.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tk.decoder = decoders.Fuse()
    return tf.PreTrainedTokenizerFast(tokenizer_object=tk)


def _gpt2():
    cfg = tf.GPT2Config(vocab_size=len(CHARS), n_positions=32, n_embd=16, n_layer=2, n_head=2,
                        bos_token_id=None, eos_token_id=None, initializer_range=0.2)  # fmt: skip
    return tf.GPT2LMHeadModel(cfg)


def _llama():  # rotary positions and grouped-query attention (4 query heads, 2 key/value)
    cfg = tf.LlamaConfig(vocab_size=len(CHARS), hidden_size=16, intermediate_size=32,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=32, initializer_range=0.2)  # fmt: skip
    return tf.LlamaForCausalLM(cfg)


# weights 10x GPT-2's usual scale, so that attention moves the logits enough for a wrong
# attention function to show


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def model_dir(request, tmp_path_factory):
    torch.manual_seed(0)
    model = {"gpt2": _gpt2, "llama": _llama}[request.param]()
    folder = tmp_path_factory.mktemp(request.param)
    model.save_pretrained(folder)
    _tokenizer().save_pretrained(folder)
    return folder


def _learner_sdpa(Q, K, V, mask=False):
    """What a learner writes for lesson 1 (NumPy, one head): softmax(Q K^T / sqrt(d)) V."""
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask:
        scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ V


def _unscaled(Q, K, V, mask=False):  # a planted mistake: no 1/sqrt(d)
    return _learner_sdpa(Q * np.sqrt(Q.shape[-1]), K, V, mask)


def _run(model, name, ids, mask=None):
    model.set_attn_implementation(name)
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask, output_attentions=name != "learner")


def test_attnlab_attention_runs_a_real_architecture_with_the_same_logits(model_dir):
    from attnlab.hf import register, register_learner

    register()
    register_learner(_learner_sdpa, "learner")
    register_learner(_unscaled, "unscaled")
    model = tf.AutoModelForCausalLM.from_pretrained(model_dir, attn_implementation="eager").eval()
    ids = torch.randint(len(CHARS), (2, 11), generator=torch.Generator().manual_seed(1))
    eager = _run(model, "eager", ids)
    for name in ("attnlab", "attnlab-ref", "learner"):
        got = _run(model, name, ids)
        torch.testing.assert_close(got.logits, eager.logits, atol=2e-5, rtol=1e-5, msg=name)
        if name != "learner":
            for a, b in zip(got.attentions, eager.attentions, strict=True):
                torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)
    wrong = _run(model, "unscaled", ids)
    assert (wrong.logits - eager.logits).abs().max() > 1e-2  # the learner's function really ran
    # padding (left-padded second row) goes through attnlab's boolean masks the same way
    pad = torch.ones(2, 11, dtype=torch.long)
    pad[1, :4] = 0
    ours, theirs = _run(model, "attnlab", ids, pad), _run(model, "eager", ids, pad)
    torch.testing.assert_close(ours.logits[0], theirs.logits[0], atol=2e-5, rtol=1e-5)
    torch.testing.assert_close(ours.logits[1, 4:], theirs.logits[1, 4:], atol=2e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="knows the causal mask or none"):
        _run(model, "learner", ids, pad)


def _page_data(html: str) -> dict:
    block = re.search(r'<script type="application/json" id="attnlab-data">(.*?)</script>', html,
                      re.S)  # fmt: skip
    return json.loads(block.group(1))


def test_explore_hf_shows_the_models_own_attention_and_tokens(model_dir, tmp_path, capsys):
    from attnlab.explore.data import unpack

    out = tmp_path / "page.html"
    text = "a cab, a bed."
    assert main(["explore", "--hf", str(model_dir), "--text", text, "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    view = _page_data(out.read_text(encoding="utf-8"))["views"][0]
    tok = tf.AutoTokenizer.from_pretrained(model_dir)
    ids = tok(text, return_tensors="pt")["input_ids"]
    assert view["queries"] == [c.replace(" ", "␣") for c in text]  # its own tokenizer's tokens
    model = tf.AutoModelForCausalLM.from_pretrained(model_dir, attn_implementation="eager").eval()
    with torch.no_grad():
        res = model(input_ids=ids, output_attentions=True)
    want = torch.stack([a[0] for a in res.attentions]).numpy()  # (L, H, T, T)
    L, H, T, _ = want.shape
    assert (view["layers"], view["heads"], view["causal"]) == (L, H, True)
    got = unpack(view["w"], L, H, T, T, True)
    np.testing.assert_allclose(got, want, atol=1 / 65535)  # 16-bit quantised, rows as queries
    best = res.logits[0, 3].argmax().item()
    assert view["top"][3][0][0] == tok.decode([best]).replace(" ", "␣")


def test_explore_hf_errors_are_one_line(tmp_path, capsys):
    assert main(["explore", "--hf", str(tmp_path), "--text", "ab"]) == 2
    assert "no config.json there" in capsys.readouterr().err
    assert main(["explore", "--hf", str(tmp_path)]) == 2
    assert "--hf needs at least one --text" in capsys.readouterr().err
    assert main(["explore", "--hf", str(tmp_path), "--playground"]) == 2
    assert "one of RUN_DIR, --hf MODEL_DIR or --playground" in capsys.readouterr().err


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Tiny attnlab GPT runs (two steps each): learned positions with grouped-query heads,
    sinusoidal positions without biases, rotary positions."""
    from attnlab.train.lm import LMRunConfig, train_lm

    root = tmp_path_factory.mktemp("runs")
    shapes = {
        "learned-gqa": {"pos": "learned", "n_kv_head": 1},
        "sinusoidal": {"pos": "sinusoidal", "bias": False},
        "rope": {"pos": "rope"},
    }
    train = {"max_iters": 2, "batch_size": 4, "eval_iters": 1, "eval_interval": 10}
    for name, extra in shapes.items():
        model = {"block_size": 16, "n_layer": 2, "n_head": 2, "n_embd": 16, **extra}
        train_lm(LMRunConfig(out=str(root / name), model=model, train=train, progress=False))
    return root


@pytest.mark.parametrize("run", ["learned-gqa", "sinusoidal"])
def test_export_hf_writes_a_gpt2_folder_with_attnlabs_logits(runs, run, tmp_path, capsys):
    from attnlab.train.lm import load_run

    out = tmp_path / "hf"
    assert main(["export-hf", str(runs / run), str(out)]) == 0
    ours, tok, _ = load_run(runs / run)
    theirs = tf.GPT2LMHeadModel.from_pretrained(out).eval()
    hf_tok = tf.AutoTokenizer.from_pretrained(out)
    text = "def f(x):\n    return x"
    assert hf_tok(text)["input_ids"] == tok.encode(text)
    assert hf_tok.decode(tok.encode(text)) == text
    ids = torch.tensor([tok.encode(text[:16])])
    with torch.no_grad():
        torch.testing.assert_close(theirs(ids).logits, ours(ids)[0], atol=2e-5, rtol=1e-5)


def test_export_hf_refuses_rotary_runs_and_full_folders(runs, tmp_path, capsys):
    assert main(["export-hf", str(runs / "rope"), str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "rotary positions have no GPT-2 form" in err and len(err.splitlines()) == 1
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("keep me")
    assert main(["export-hf", str(runs / "learned-gqa"), str(tmp_path / "full")]) == 2
    assert "not empty; pass --force" in capsys.readouterr().err


def test_explore_hf_shows_an_encoders_full_attention(tmp_path):
    from attnlab.explore.data import unpack

    torch.manual_seed(0)
    cfg = tf.BertConfig(vocab_size=len(CHARS), hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)  # fmt: skip
    tf.BertModel(cfg).save_pretrained(tmp_path / "bert")
    _tokenizer().save_pretrained(tmp_path / "bert")
    out = tmp_path / "page.html"
    assert main(["explore", "--hf", str(tmp_path / "bert"), "--text", "abc d", "-o", str(out)]) == 0
    view = _page_data(out.read_text(encoding="utf-8"))["views"][0]
    model = tf.AutoModel.from_pretrained(tmp_path / "bert", attn_implementation="eager").eval()
    with torch.no_grad():
        res = model(input_ids=torch.tensor([[0, 1, 2, 10, 3]]), output_attentions=True)  # "abc d"
    want = torch.stack([a[0] for a in res.attentions]).numpy()  # (2, 2, 5, 5), not causal
    assert view["causal"] is False and view["top"] is None
    np.testing.assert_allclose(unpack(view["w"], 2, 2, 5, 5, False), want, atol=1 / 65535)
    assert want[0, 0, 0, 4] > 0  # the first token sees the last: full attention


def test_explore_hf_refuses_encoder_decoder_models_in_one_line(tmp_path, capsys):
    cfg = tf.T5Config(vocab_size=len(CHARS), d_model=16, d_kv=8, d_ff=32, num_layers=1,
                      num_heads=2, decoder_start_token_id=0)  # fmt: skip
    tf.T5ForConditionalGeneration(cfg).save_pretrained(tmp_path / "t5")
    _tokenizer().save_pretrained(tmp_path / "t5")
    capsys.readouterr()  # transformers' own progress bars while saving
    assert main(["explore", "--hf", str(tmp_path / "t5"), "--text", "ab"]) == 2
    err = capsys.readouterr().err
    assert "an encoder-decoder model (t5)" in err and len(err.splitlines()) == 1
