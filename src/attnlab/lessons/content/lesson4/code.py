# Lesson 4: attention in seq2seq models, Bahdanau and Luong.
# The prose of each step is in en.md, ja.md and zh.md beside this file.

# %% setup
import numpy as np

from attnlab import ref
from attnlab.grade import check
from attnlab.lessons import check_answer, quiz
from attnlab.lessons.show import bars, heat, matrix, plot, table

SEED = 0
LANG = "en"
SOURCE = ["je", "suis", "un", "chat"]  # a tiny source sentence

# %% step bottleneck
rng = np.random.default_rng([SEED, 1])
enc = rng.standard_normal((4, 3))  # (S, d): one encoder state per source word
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
scores = {
    "dot": enc @ s,  # s · h
    "scaled_dot": enc @ s / np.sqrt(d),  # s · h / √d
    "general": enc @ (W.T @ s),  # sᵀ W h
    "additive": np.tanh(s @ W_q + enc @ W_k) @ v,  # vᵀ tanh(W_q s + W_k h)
    "concat": np.tanh(np.concatenate([np.tile(s, (4, 1)), enc], axis=1) @ np.vstack([W_q, W_k]))
    @ v,
}
weights = {kind: ref.softmax(sc) for kind, sc in scores.items()}
for kind, sc in scores.items():  # the same scores from attnlab.ref, by name
    params = {
        "general": {"W": W},
        "additive": {"W_q": W_q, "W_k": W_k, "v": v},
        "concat": {"W": np.vstack([W_q, W_k]), "v": v},
    }
    assert np.allclose(sc, ref.score(s, enc, kind, **params.get(kind, {})))
rows = [
    (kind, " ".join(f"{x:+.2f}" for x in scores[kind]), " ".join(f"{x:.2f}" for x in w))
    for kind, w in weights.items()
]
print(table(["score", "scores", "weights"], rows))
plot("lesson4_2_scores", heat(np.stack(list(weights.values())), list(weights), SOURCE))

# %% step which_query
rng = np.random.default_rng([SEED, 3])
s_prev, h_t = rng.standard_normal((2, d))  # Bahdanau asks with s_(t-1), Luong with h_t
a_bahdanau = ref.softmax(np.tanh(s_prev @ W_q + enc @ W_k) @ v)  # additive
a_luong = ref.softmax(enc @ (W.T @ h_t))  # general
W_c = rng.standard_normal((2 * d, d))
c = a_luong @ enc  # (d,): Luong's context
h_tilde = np.tanh(np.concatenate([c, h_t]) @ W_c)  # the attentional state
print("a_bahdanau =", a_bahdanau.round(2))
print("a_luong    =", a_luong.round(2))
print("h_tilde    =", h_tilde.round(3))

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
# features: [does the action, is the action, a relation, a place]; the articles have none
KEYS = np.array(
    [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0], [0, 0, 0, 1]],
    dtype=float,
)
q_sat = np.log([9.0, 4.0, 3.0, 2.0])  # logs: the weights come out as 9 : 4 : 3 : 2 : 1 : 1
w = ref.softmax(KEYS @ q_sat)
for word, weight in zip(WORDS, w, strict=True):
    print(f"sat -> {word:4s} {weight:.2f} " + "#" * round(weight * 40))
plot("lesson4_5_cat_sat", bars({"sat": w}, WORDS))


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
