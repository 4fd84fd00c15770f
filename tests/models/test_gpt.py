import pytest
import torch

from attnlab.models import GPT, GPTConfig, sample_next
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


@pytest.mark.parametrize(("pos", "kv"), [("learned", None), ("sinusoidal", 2), ("rope", 2)])
def test_decoding_steps_give_the_logits_of_the_whole_sequence(pos, kv):
    # generate's per-token path skips the modules: it must still compute what they compute
    from attnlab.models.gpt import _Decoder

    m = _model(pos, n_kv_head=kv, bias=pos != "rope")
    idx = torch.randint(23, (2, 16))
    full, _ = m(idx)
    threads = torch.get_num_threads()
    with torch.inference_mode():
        dec = _Decoder(m)
        steps = [dec.prefill(idx[:, :5])]
        steps += [dec.step(idx[:, t]) for t in range(5, 16)]
    torch.testing.assert_close(torch.stack(steps, dim=1), full[:, 4:], atol=1e-5, rtol=1e-5)
    assert dec.full() and torch.get_num_threads() == threads  # restored after each step
