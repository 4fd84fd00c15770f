import copy

import pytest
import torch

from attnlab import parity
from attnlab.models import GPT, GPTConfig, gpt, sample_next
from attnlab.nn import KVCache


def _model(pos="learned", **kw):
    torch.manual_seed(0)
    cfg = GPTConfig(vocab_size=23, block_size=16, n_layer=2, n_head=4, n_embd=32, pos=pos, **kw)
    return GPT(cfg).eval()


@pytest.mark.parametrize("pos", ["learned", "sinusoidal", "rope"])
def test_shapes_loss_and_causality(pos):
    m = _model(pos)
    idx = torch.randint(23, (3, 10))
    logits, loss = m(idx, idx)
    assert logits.shape == (3, 10, 23) and loss.ndim == 0
    changed = idx.clone()
    changed[:, 6:] = (changed[:, 6:] + 5) % 23  # change the future
    torch.testing.assert_close(m(changed)[0][:, :6], logits[:, :6])
    assert not torch.allclose(m(changed)[0][:, 6:], logits[:, 6:])


@pytest.mark.parametrize(("pos", "kv"), [("learned", None), ("sinusoidal", None), ("rope", 2)])
def test_kv_cache_gives_the_same_logits(pos, kv):
    m = _model(pos, n_kv_head=kv)
    idx = torch.randint(23, (2, 14))
    full, _ = m(idx)
    caches = [KVCache() for _ in m.blocks]
    parts = [m(idx[:, :5], caches=caches)[0]]
    parts += [m(idx[:, t : t + 1], caches=caches)[0] for t in range(5, 9)]
    parts.append(m(idx[:, 9:], caches=caches)[0])  # a chunk of several new tokens at once
    torch.testing.assert_close(torch.cat(parts, dim=1), full, atol=1e-5, rtol=1e-5)
    assert len(caches[0]) == 14


@pytest.mark.parametrize("pos", ["learned", "rope"])
def test_greedy_generation_with_and_without_cache_agree(pos):
    m = _model(pos)
    prompt = torch.randint(23, (1, 4))
    a = torch.cat(list(m.generate(prompt, 12, temperature=0)))  # stays within block_size = 16
    b = torch.cat(list(m.generate(prompt, 12, temperature=0, use_cache=False)))
    assert torch.equal(a, b)
    assert (
        len(list(m.generate(prompt, 40, temperature=0))) == 40
    )  # past block_size: the window slides


def test_attention_weights_for_every_layer():
    m = _model()
    _, _, weights = m(torch.randint(23, (1, 7)), need_weights=True)
    assert len(weights) == 2 and weights[0].shape == (1, 4, 7, 7)
    torch.testing.assert_close(weights[1].sum(-1), torch.ones(1, 4, 7))
    assert torch.all(weights[0][..., 0, 1:] == 0)  # causal


def test_config_and_length_errors():
    with pytest.raises(ValueError, match="unknown GPTConfig field"):
        GPTConfig.from_dict({"n_layers": 3})
    with pytest.raises(ValueError, match="pos must be one of"):
        GPTConfig(pos="alibi")
    with pytest.raises(ValueError, match="exceeds block_size 16"):
        _model()(torch.zeros(1, 17, dtype=torch.long))


def test_sampling_filters():
    logits = torch.tensor([[0.0, 1.0, 5.0, 2.0]])
    assert sample_next(logits, 0).item() == 2
    g = torch.Generator().manual_seed(0)
    draws = {sample_next(logits, 1.0, top_k=2, generator=g).item() for _ in range(50)}
    assert draws <= {2, 3}
    draws = {sample_next(logits, 1.0, top_p=0.5, generator=g).item() for _ in range(50)}
    assert draws == {2}
    assert m_weight_tied(_model())


def m_weight_tied(m: GPT) -> bool:
    return m.lm_head.weight.data_ptr() == m.wte.weight.data_ptr()


DECODERS = ["_Decoder", "_NumpyDecoder"]  # torch ops on gathered tensors; NumPy on copies


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize(("pos", "kv"), [("learned", None), ("sinusoidal", 2), ("rope", 2)])
def test_decoding_steps_give_the_logits_of_the_whole_sequence(pos, kv, decoder):
    # generate's per-token path skips the modules: it must still compute what they compute
    m = _model(pos, n_kv_head=kv, bias=pos != "rope")
    with torch.no_grad():  # biases start at zero: give them values, or one left out passes
        for name, p in m.named_parameters():
            if name.endswith(".bias"):
                p.normal_(0, 0.5)
    idx = torch.randint(23, (2, 16))
    full, _ = m(idx)
    threads = torch.get_num_threads()
    with torch.inference_mode():
        dec = getattr(gpt, decoder)(m)
        steps = [dec.prefill(idx[:, :5])]
        steps += [dec.step(idx[:, t]) for t in range(5, 16)]
    torch.testing.assert_close(torch.stack(steps, dim=1), full[:, 4:], atol=1e-5, rtol=1e-5)
    assert dec.full() and torch.get_num_threads() == threads  # restored after each step
    with pytest.raises((ValueError, IndexError), match="16"):  # full: an error, no answer
        dec.step(idx[:, 0])


@pytest.mark.parametrize("batch", [1, 2])  # one sequence: vectors, not rows (NumpyKV.kt_one)
@pytest.mark.parametrize(("pos", "kv"), [("learned", None), ("sinusoidal", None), ("rope", 2)])
def test_numpy_decoding_meets_float32_parity_against_a_float64_oracle(pos, kv, batch):
    # the oracle: the same model in float64; the NumPy steps may err at most twice as much as
    # the model's own float32 forward does (attnlab.parity), at every position
    m = _model(pos, n_kv_head=kv)
    with torch.no_grad():  # LayerNorm affine parts away from 1 and 0: the folding must hold
        for ln in [b.ln_1 for b in m.blocks] + [b.ln_2 for b in m.blocks] + [m.ln_f]:
            ln.weight.uniform_(0.5, 1.5)
            ln.bias.normal_(0, 0.3)
    idx = torch.randint(23, (batch, 16))
    with torch.inference_mode():
        naive = m(idx)[0][:, 7:]
        oracle = copy.deepcopy(m).double()(idx)[0][:, 7:]
        dec = gpt._NumpyDecoder(m)
        got = torch.stack(
            [dec.prefill(idx[:, :8])] + [dec.step(idx[:, t]) for t in range(8, 16)], 1
        )
    result = parity.compare(got, oracle, naive)
    assert result.ok, result.message
    assert torch.equal(got.argmax(-1), naive.argmax(-1))


@pytest.mark.parametrize(("pos", "kv"), [("learned", None), ("sinusoidal", 2), ("rope", None)])
def test_cached_sampling_sees_the_logits_of_each_window_across_slides(pos, kv, monkeypatch):
    # 40 tokens from a 3-token prompt at block 16: the window slides 4 times (rebuilt from the
    # last 8 tokens); each token's logits must equal the model's forward on the same window
    m = _model(pos, n_kv_head=kv)
    seen: dict[bool, list[torch.Tensor]] = {True: [], False: []}
    real = gpt.sample_next

    def recording(logits, *args):
        seen[use_cache].append(logits.clone())
        return real(logits, *args)

    monkeypatch.setattr(gpt, "sample_next", recording)
    prompt = torch.randint(23, (2 if pos == "rope" else 1, 3))
    tokens = {}
    for use_cache in (True, False):
        tokens[use_cache] = torch.stack(list(m.generate(prompt, 40, 0, use_cache=use_cache)), 1)
    assert tokens[True].shape == (len(prompt), 40)
    with torch.inference_mode():
        for use_cache in (True, False):
            cached, rerun = _windows(torch.cat([prompt, tokens[use_cache]], 1), 3, 40, 16)
            want = torch.stack([m(w)[0][:, -1] for w in (cached if use_cache else rerun)])
            torch.testing.assert_close(torch.stack(seen[use_cache]), want, atol=1e-5, rtol=1e-5)
    assert max(w.shape[1] for w in cached) == 16 and min(w.shape[1] for w in cached[13:]) == 8


def _windows(seq, prompt, new, bs):
    """The context each of ``new`` tokens was sampled from, after generate's docstring: cached,
    a window that grows to bs tokens and then restarts from the last bs // 2; re-running, the
    last bs tokens."""
    cached, rerun, start = [], [], max(0, prompt - bs)
    for n in range(prompt, prompt + new):  # n tokens known when sampling the next
        if n - 1 - start >= bs:  # the cache holds bs tokens: the window slides
            start = n - bs // 2
        cached.append(seq[:, start:n])
        rerun.append(seq[:, max(0, n - bs) : n])
    return cached, rerun


def test_generate_decodes_in_numpy_for_float32_on_the_cpu_and_in_torch_otherwise():
    m = _model("rope", n_kv_head=2)
    assert isinstance(gpt._decoder(m), gpt._NumpyDecoder)
    m64 = copy.deepcopy(m).double()
    assert isinstance(gpt._decoder(m64), gpt._Decoder)
    prompt = torch.randint(23, (1, 3))
    a = torch.cat(list(m64.generate(prompt, 13, temperature=0)))  # stays within block 16
    b = torch.cat(list(m64.generate(prompt, 13, temperature=0, use_cache=False)))
    assert torch.equal(a, b) and len(list(m64.generate(prompt, 40, temperature=0))) == 40
    with pytest.raises(ValueError, match=r"token ids must be in \[0, 23\)"):
        next(m.generate(torch.tensor([[3, -1]]), 1))  # NumPy alone would read row 22
