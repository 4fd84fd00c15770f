# Lesson 3: multi-head attention and positional encoding.
# The prose of each step is in en.md, ja.md and zh.md beside this file.

# %% setup
import numpy as np

from attnlab import ref
from attnlab.grade import check
from attnlab.lessons import check_answer, quiz
from attnlab.lessons.show import heat, matrix, plot, table

SEED = 0
LANG = "en"

# %% step split_heads
import torch

from attnlab.oracles import torch_mha

rng = np.random.default_rng([SEED, 1])
T, d_model, h = 10, 512, 8
d_k = d_model // h
x = rng.standard_normal((1, T, d_model))  # (B, T, d_model)
W_q, W_k, W_v, W_o = rng.standard_normal((4, d_model, d_model)) / np.sqrt(d_model)
Q = x @ W_q  # (B, T, d_model): one big projection
heads = Q.reshape(1, T, h, d_k).transpose(0, 2, 1, 3)  # (B, h, T, d_k): h slices of width d_k
out, w = ref.multi_head_attention(
    x, x, x, W_q, W_k, W_v, W_o, h
)  # out (B, T, d_model), w (B, h, T, T)
with torch.no_grad():
    theirs, _ = torch_mha(x, x, x, W_q, W_k, W_v, W_o, h)
diff = np.abs(out - theirs.numpy()).max()
print(f"d_model = {d_model}, h = {h} -> d_k = {d_k}")
print("Q", Q.shape, "-> heads", heads.shape, "-> out", out.shape, "weights", w.shape)
print(f"diff = max|out - theirs| = {diff:.1e}")
plot("lesson3_1_heads", heat(w[0, 0], title="head 0"))

# %% step choosing_h
n = 1000
rows = [
    (h, d_model // h, f"{2 * h * n * n * (d_model // h) / 1e9:.2f}")
    for h in (1, 2, 4, 8, 16, 32, 64)
]
print(table(["h", "d_k", f"GFLOP of Q Kᵀ, T={n}"], rows))

# %% step permutation
rng = np.random.default_rng([SEED, 3])
T, d_model, h = 6, 16, 4
x = rng.standard_normal((T, d_model))
Ws = rng.standard_normal((4, d_model, d_model)) / np.sqrt(d_model)
perm = rng.permutation(T)
out, _ = ref.multi_head_attention(x, x, x, *Ws, h)
out_p, _ = ref.multi_head_attention(x[perm], x[perm], x[perm], *Ws, h)
plain = np.abs(out_p - out[perm]).max()  # shuffled in = shuffled out?
pe = ref.sinusoidal_positional_encoding(T, d_model)
y, y_p = x + pe, x[perm] + pe  # the positions stay, the words move
out2, _ = ref.multi_head_attention(y, y, y, *Ws, h)
out2_p, _ = ref.multi_head_attention(y_p, y_p, y_p, *Ws, h)
with_pe = np.abs(out2_p - out2[perm]).max()
print("perm =", perm.tolist())
print(f"plain   = max|out_p - out[perm]|   = {plain:.1e}")
print(f"with_pe = max|out2_p - out2[perm]| = {with_pe:.2f}")

# %% step sinusoidal
T, d = 50, 64
pe = ref.sinusoidal_positional_encoding(T, d)  # (T, d)
print(f"PE[0:4, 0:6] (T={T}, d={d}) =")
print(matrix(pe[:4, :6], 3))
plot(
    "lesson3_4_positional",
    heat(pe, xlabel="dimension", ylabel="position", vmin=-1, vmax=1, cmap="RdBu", annotate=False),
)


# %% step shift_is_linear
def rotation(k, d):
    """The exact map PE[pos] -> PE[pos + k]: a 2x2 rotation for each (sin, cos) column pair."""
    M = np.zeros((d, d))
    for i, f in enumerate(10000.0 ** (-np.arange(0, d, 2) / d)):
        c, s = np.cos(k * f), np.sin(k * f)
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]
    return M


d, k = 16, 3
pe = ref.sinusoidal_positional_encoding(200, d)
M, *_ = np.linalg.lstsq(pe[:100], pe[k : 100 + k], rcond=None)  # fitted on positions 0..99
residual = np.abs(pe[:100] @ M - pe[k : 100 + k]).max()
exact = np.abs(pe[:100] @ rotation(k, d) - pe[k : 100 + k]).max()
dots = [round(float(pe[p] @ pe[p + k]), 6) for p in (0, 10, 50)]
print(f"residual = max|PE[pos] M - PE[pos + {k}]| = {residual:.1e}")
print(f"exact    = max|PE[pos] R - PE[pos + {k}]| = {exact:.1e}")
print(f"dots = [PE[p] · PE[p + {k}] for p in (0, 10, 50)] = {dots}")

# %% step beyond
pe = ref.sinusoidal_positional_encoding(1100, d)
far = np.abs(pe[1000:1090] @ rotation(k, d) - pe[1000 + k : 1090 + k]).max()
print(f"far = max|PE[1000:1090] R - PE[1003:1093]| = {far:.1e}")
print(f"PE[1000].min(), PE[1000].max() = {pe[1000].min():.3f}, {pe[1000].max():.3f}")


# %% exercise heads grade=multi_head_attention
def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    """X (T, d_model), W_* (d_model, d_model) -> (T, d_model); mask=True: causal."""
    raise NotImplementedError("TODO: project, split into heads, attend, join, W_O")


# %% solution heads
def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    """X (T, d_model), W_* (d_model, d_model) -> (T, d_model); mask=True: causal."""
    T, d_model = X.shape
    d_k = d_model // num_heads

    def split(M):  # (T, d_model) -> (h, T, d_k)
        return M.reshape(T, num_heads, d_k).transpose(1, 0, 2)

    Q, K, V = split(X @ W_Q), split(X @ W_K), split(X @ W_V)
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)  # (h, T, T)
    if mask:
        S = np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    heads = A @ V  # (h, T, d_k)
    return heads.transpose(1, 0, 2).reshape(T, d_model) @ W_O


# %% mistake heads head_split_reshape
def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    T, d_model = X.shape
    d_k = d_model // num_heads

    def split(M):  # a reshape without the transpose mixes positions and heads
        return M.reshape(num_heads, T, d_k)

    Q, K, V = split(X @ W_Q), split(X @ W_K), split(X @ W_V)
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)
    if mask:
        S = np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf)
    A = np.exp(S - S.max(axis=-1, keepdims=True))
    A = A / A.sum(axis=-1, keepdims=True)
    return (A @ V).transpose(1, 0, 2).reshape(T, d_model) @ W_O


# %% exercise encoding grade=positional_encoding
def positional_encoding(T, d):
    """-> (T, d): PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(the same)."""
    raise NotImplementedError("TODO: positions, frequencies, sin on even and cos on odd columns")


# %% solution encoding
def positional_encoding(T, d):
    """-> (T, d): PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(the same)."""
    pos = np.arange(T)[:, None]  # (T, 1)
    freq = 10000.0 ** (-np.arange(0, d, 2) / d)  # (d/2,)
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(pos * freq)
    pe[:, 1::2] = np.cos(pos * freq)
    return pe


# %% mistake encoding sin_cos_swapped
def positional_encoding(T, d):
    pos = np.arange(T)[:, None]
    freq = 10000.0 ** (-np.arange(0, d, 2) / d)
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.cos(pos * freq)
    pe[:, 1::2] = np.sin(pos * freq)
    return pe
