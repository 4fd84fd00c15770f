# Lesson 4: recurrent encoders and decoders, and the attention that joins them.
# The prose of each step is in en.md, ja.md and zh.md beside this file.

# %% setup
import numpy as np

from attnlab import ref
from attnlab.grade import check
from attnlab.lessons import check_answer, quiz
from attnlab.lessons.show import bars, heat, matrix, plot, table

SEED = 0
LANG = "en"
SOURCE = ["je", "suis", "un", "chat"]  # the French sentence every step translates
TARGET = ["I", "am", "a", "cat"]

# %% step lstm_step
import torch
from torch import nn

torch.manual_seed(SEED)
d_in, d_h = 3, 4
x = torch.randn(1, 5, d_in, dtype=torch.float64)  # (B, T, d_in): five inputs
lstm = nn.LSTM(d_in, d_h, batch_first=True, dtype=torch.float64)
W_ih, W_hh = lstm.weight_ih_l0.detach(), lstm.weight_hh_l0.detach()  # (4 d_h, d_in), (4 d_h, d_h)
b = (lstm.bias_ih_l0 + lstm.bias_hh_l0).detach()  # (4 d_h,)


def lstm_step(x_t, h, c):
    """One LSTM step by hand: x_t (d_in,), h and c (d_h,) -> new h, new c, the gates."""
    i, f, g, o = (x_t @ W_ih.T + h @ W_hh.T + b).chunk(4)  # PyTorch stacks i, f, g, o
    i, f, o = i.sigmoid(), f.sigmoid(), o.sigmoid()  # gates: shares between 0 and 1
    c = f * c + i * g.tanh()  # keep part of the old cell, write part of the candidate
    h = o * c.tanh()  # the output gate decides what the cell shows
    return h, c, {"input i": i, "forget f": f, "output o": o}


h, c = torch.zeros(d_h, dtype=torch.float64), torch.zeros(d_h, dtype=torch.float64)
for t in range(5):
    h, c, gates = lstm_step(x[0, t], h, c)
with torch.no_grad():
    _, (h_n, c_n) = lstm(x)  # PyTorch's final h and c
lstm_diff = max((h - h_n[0, 0]).abs().max().item(), (c - c_n[0, 0]).abs().max().item())
for name, gate in gates.items():
    print(f"{name:9s}", matrix(gate[None], 2, ""))
print(f"lstm_diff = max|by hand - nn.LSTM| over h and c = {lstm_diff:.1e}")

# %% step gru_step
gru = nn.GRU(d_in, d_h, batch_first=True, dtype=torch.float64)


def gru_step(x_t, h, cell=gru, suffix=""):
    """One GRU step by hand: x_t (d_in,), h (d_h,) -> new h.
    suffix="_reverse" reads a bidirectional GRU's backward weights."""
    W_i, W_h, b_i, b_h = (
        getattr(cell, f"{name}_l0{suffix}").detach()
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    )
    xr, xz, xn = (x_t @ W_i.T + b_i).chunk(3)  # PyTorch stacks r, z, n
    hr, hz, hn = (h @ W_h.T + b_h).chunk(3)
    r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()  # reset and update gates
    n = (xn + r * hn).tanh()  # the candidate: r decides how much of h it may use
    return (1 - z) * n + z * h  # z keeps the old state, 1 - z takes the candidate


h = torch.zeros(d_h, dtype=torch.float64)
for t in range(5):
    h = gru_step(x[0, t], h)
with torch.no_grad():
    _, h_n = gru(x)
gru_diff = (h - h_n[0, 0]).abs().max().item()
n_lstm, n_gru = (sum(p.numel() for p in m.parameters()) for m in (lstm, gru))
print(f"gru_diff = max|by hand - nn.GRU| = {gru_diff:.1e}")
print(f"parameters: LSTM {n_lstm}, GRU {n_gru} (d_in = {d_in}, d_h = {d_h})")

# %% step vanishing
torch.manual_seed(SEED)
T_long, width = 60, 16
xs = torch.randn(1, T_long, width, requires_grad=True)  # (B, T, width)
models = {
    "RNN": nn.RNN(width, width, batch_first=True),
    "LSTM": nn.LSTM(width, width, batch_first=True),
    "GRU": nn.GRU(width, width, batch_first=True),
    "LSTM, f ≈ 0.95": nn.LSTM(width, width, batch_first=True),
}
with torch.no_grad():
    models["LSTM, f ≈ 0.95"].bias_ih_l0[width : 2 * width] += 3.0  # forget gate near σ(3)
back = [0, 10, 20, 40]
rows, reach = [], {}
for name, model in models.items():
    out, _ = model(xs)  # (B, T, width)
    (grad,) = torch.autograd.grad(out[0, -1].sum(), xs)  # how the last state moves with each x_t
    reach[name] = [grad[0, -1 - k].norm().item() for k in back]
    rows.append((name, *(f"{r:.1e}" for r in reach[name])))
gated_far = reach["LSTM, f ≈ 0.95"][-1]
print(table(["", *(f"x[T-{k}]" if k else "x[T]" for k in back)], rows))

# %% step clipping
torch.manual_seed(SEED)
rnn = nn.RNN(width, width, batch_first=True, nonlinearity="relu")
with torch.no_grad():
    rnn.weight_hh_l0.mul_(4.0)  # a recurrent matrix that stretches the state at every step
out, _ = rnn(torch.randn(1, 30, width))
out[0, -1].pow(2).mean().backward()
params = list(rnn.parameters())
before = torch.cat([p.grad.flatten() for p in params])  # the whole gradient as one vector
norm = nn.utils.clip_grad_norm_(params, max_norm=1.0).item()  # returns the norm before clipping
after = torch.cat([p.grad.flatten() for p in params])
by_hand = before * min(1.0, 1.0 / before.norm().item())  # the same rule, written out
same_way = (before @ after / (before.norm() * after.norm())).item()  # cosine
print(f"norm before = {norm:.3g}, after = {after.norm().item():.3f}")
print(f"cosine(before, after) = {same_way:.6f}")
print(f"max|clip_grad_norm_ - by hand| = {(after - by_hand).abs().max().item():.1e}")

# %% step bidirectional
torch.manual_seed(SEED)
embed = torch.randn(len(SOURCE), d_in, dtype=torch.float64)  # (S, d_in): one vector per word
birnn = nn.GRU(d_in, d_h, batch_first=True, bidirectional=True, dtype=torch.float64)
fwd, h = [], torch.zeros(d_h, dtype=torch.float64)
for t in range(len(SOURCE)):  # left to right
    h = gru_step(embed[t], h, birnn)
    fwd.append(h)
bwd, h = [], torch.zeros(d_h, dtype=torch.float64)
for t in reversed(range(len(SOURCE))):  # right to left, with the second set of weights
    h = gru_step(embed[t], h, birnn, "_reverse")
    bwd.insert(0, h)
states = torch.stack([torch.cat([f, b_]) for f, b_ in zip(fwd, bwd, strict=True)])  # (S, 2 d_h)
with torch.no_grad():
    theirs, _ = birnn(embed[None])  # (1, S, 2 d_h)
bi_diff = (states - theirs[0]).abs().max().item()
print("encoder states", tuple(states.shape), "= [left to right ; right to left] per word")
print(f"bi_diff = max|by hand - nn.GRU(bidirectional=True)| = {bi_diff:.1e}")

# %% step bottleneck
rng = np.random.default_rng([SEED, 1])
enc = rng.standard_normal((4, 3))  # (S, d): stand-ins for the encoder states, one per word
dec = rng.standard_normal((3, 3))  # (3, d): the decoder's state at three output steps
fixed = enc[-1]  # without attention: the decoder gets this one vector at every step
contexts = np.stack([ref.softmax(enc @ s) @ enc for s in dec])  # (3, d): one context per step


def cosine(a, b):
    return a @ b / (np.linalg.norm(a) * np.linalg.norm(b))


sims = [round(float(cosine(contexts[i], contexts[j])), 3) for i, j in ((0, 1), (0, 2), (1, 2))]
print("fixed =", fixed.round(3))
print("sims =", sims)

# %% step score_functions
rng = np.random.default_rng([SEED, 2])
d, d_a = 3, 4
W = rng.standard_normal((d, d))
W_q, W_k, v = rng.standard_normal((d, d_a)), rng.standard_normal((d, d_a)), rng.standard_normal(d_a)
s = dec[0]  # the decoder state that asks
pairs = np.concatenate([np.tile(s, (4, 1)), enc], axis=1)  # (4, 2d): [s; h] for each key
W_cat = np.vstack([W_q, W_k])  # (2d, d_a): [s; h] W_cat = s W_q + h W_k
scores = {
    "dot": enc @ s,  # s · h
    "scaled_dot": enc @ s / np.sqrt(d),  # s · h / √d
    "general": enc @ (W.T @ s),  # sᵀ W h
    "additive": np.tanh(s @ W_q + enc @ W_k) @ v,  # vᵀ tanh(W_q s + W_k h)
    "concat": np.tanh(pairs @ W_cat) @ v,  # vᵀ tanh([s; h] W_cat)
}
weights = {kind: ref.softmax(sc) for kind, sc in scores.items()}
for kind, sc in scores.items():  # the same scores from attnlab.ref, by name
    params = {
        "general": {"W": W},
        "additive": {"W_q": W_q, "W_k": W_k, "v": v},
        "concat": {"W": W_cat, "v": v},
    }
    assert np.allclose(sc, ref.score(s, enc, kind, **params.get(kind, {})))
rows = [
    (kind, " ".join(f"{x:+.2f}" for x in scores[kind]), " ".join(f"{x:.2f}" for x in w))
    for kind, w in weights.items()
]
print(table(["score", "scores", "weights"], rows))
plot(
    "lesson4_7_scores",
    heat(
        np.stack(list(weights.values())),
        list(weights),
        SOURCE,
        xlabel="source word",
        ylabel="score function",
    ),
)

# %% step which_query
rng = np.random.default_rng([SEED, 3])
s_prev, h_t = rng.standard_normal((2, d))  # Bahdanau asks with s_(t-1), Luong with h_t
a_bahdanau = ref.softmax(np.tanh(s_prev @ W_q + enc @ W_k) @ v)  # additive
a_luong = ref.softmax(enc @ (W.T @ h_t))  # general
W_c = rng.standard_normal((2 * d, d)) / np.sqrt(2 * d)  # scaled, so that tanh is not saturated
c = a_luong @ enc  # (d,): Luong's context
h_tilde = np.tanh(np.concatenate([c, h_t]) @ W_c)  # the attentional state
print("a_bahdanau =", a_bahdanau.round(2))
print("a_luong    =", a_luong.round(2))
print("h_tilde    =", h_tilde.round(3))

# %% step walkthrough
torch.manual_seed(SEED)
keys = values = states  # (S, 2 d_h): the bidirectional encoder's states are both
d_s, d_a = 2 * d_h, 4
Wq_a, Wk_a = torch.randn(2, d_s, d_a, dtype=torch.float64)  # additive attention, untrained
v_a = torch.randn(d_a, dtype=torch.float64)
cell = nn.GRUCell(d_in + d_s, d_s, dtype=torch.float64)  # input: [previous word ; context]
out_embed = torch.randn(len(TARGET), d_in, dtype=torch.float64)  # <s>, I, am, a
s_t = keys.mean(0)  # (d_s,): the decoder starts from a summary of the source
alignment = []
with torch.no_grad():
    for t, word in enumerate(TARGET):
        a = torch.softmax(torch.tanh(s_t @ Wq_a + keys @ Wk_a) @ v_a, dim=0)  # (S,)
        context = a @ values  # (d_s,): the weighted sum of the encoder states
        s_t = cell(torch.cat([out_embed[t], context])[None], s_t[None])[0]  # (d_s,)
        alignment.append(a.numpy())
        fed = "<s>" if t == 0 else TARGET[t - 1]  # teacher forcing: the right previous word
        print(f"step {t + 1}: input {fed:3s} target {word:3s} weights", a.numpy().round(2))
alignment = np.stack(alignment)  # (T, S)
top = alignment.max()
plot(
    "lesson4_9_walkthrough",
    heat(alignment, TARGET, SOURCE, xlabel="source word", ylabel="target word"),
)

# %% step types
rng = np.random.default_rng([SEED, 4])
src = rng.standard_normal((4, 8))  # (S, d): the encoder's output
tgt = rng.standard_normal((3, 8))  # (T, d): the decoder's states so far
_, w_self = ref.scaled_dot_product_attention(src, src, src, return_weights=True)
_, w_cross = ref.scaled_dot_product_attention(tgt, src, src, return_weights=True)
_, w_causal = ref.scaled_dot_product_attention(tgt, tgt, tgt, is_causal=True, return_weights=True)
print("w_self  ", w_self.shape)
print("w_cross ", w_cross.shape)
print("w_causal", w_causal.shape)
print(matrix(w_causal))

# %% step cat_sat
WORDS = ["The", "cat", "sat", "on", "the", "mat"]
wanted = np.array([0.05, 0.45, 0.20, 0.15, 0.05, 0.10])  # the weights quoted for "sat"
# features: [does the action, is the action, a relation, a place]; the articles have none
KEYS = np.array(
    [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0], [0, 0, 0, 1]],
    dtype=float,
)
q_sat = np.log(wanted[[1, 2, 3, 5]] / wanted[0])  # solve for the query: log of each ratio
w = ref.softmax(KEYS @ q_sat)
for word, weight in zip(WORDS, w, strict=True):
    print(f"sat -> {word:4s} {weight:.2f} " + "#" * round(weight * 40))
print("q_sat =", q_sat.round(3))
plot("lesson4_11_cat_sat", bars({"sat": w}, WORDS))


# %% step recap


# %% exercise additive grade=additive_attention
def additive_attention(query, keys, W_q, W_k, v):
    """query (d_q,), keys (S, d_k) (also the values), W_q (d_q, d_a), W_k (d_k, d_a), v (d_a,)
    -> (context (d_k,), weights (S,))."""
    raise NotImplementedError("TODO: v · tanh(query W_q + keys W_k), softmax, context")


# %% solution additive
def additive_attention(query, keys, W_q, W_k, v):
    """query (d_q,), keys (S, d_k) (also the values), W_q (d_q, d_a), W_k (d_k, d_a), v (d_a,)
    -> (context (d_k,), weights (S,))."""
    scores = np.tanh(query @ W_q + keys @ W_k) @ v  # (S,)
    e = np.exp(scores - scores.max())
    weights = e / e.sum()
    return weights @ keys, weights


# %% mistake additive missing_tanh
def additive_attention(query, keys, W_q, W_k, v):
    scores = (query @ W_q + keys @ W_k) @ v  # no tanh: a linear score
    e = np.exp(scores - scores.max())
    weights = e / e.sum()
    return weights @ keys, weights


# %% exercise clip answer=clipped
g = before.numpy()  # the gradient of step 4, as one long vector
max_norm = 5.0
clipped = np.clip(g, -max_norm, max_norm)  # TODO: shorten g to norm max_norm, keep its direction
print(f"norm {np.linalg.norm(g):.3g} -> {np.linalg.norm(clipped):.3g}")

# %% solution clip
g = before.numpy()
max_norm = 5.0
clipped = g * min(1.0, max_norm / np.linalg.norm(g))  # shrink only a gradient that is too long
print(f"norm {np.linalg.norm(g):.3g} -> {np.linalg.norm(clipped):.3g}")
turned = float(g @ clipped / (np.linalg.norm(g) * np.linalg.norm(clipped)))  # cosine

# %% mistake clip unit
g = before.numpy()
max_norm = 5.0
clipped = g / np.linalg.norm(g)
