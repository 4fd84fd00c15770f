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
block = x @ W_q[:, 3 * d_k : 4 * d_k]  # head 3's own query matrix: a block of W_q's columns
block_diff = np.abs(block - heads[:, 3]).max()
out, w = ref.multi_head_attention(
    x, x, x, W_q, W_k, W_v, W_o, h
)  # out (B, T, d_model), w (B, h, T, T)
with torch.no_grad():
    theirs, _ = torch_mha(x, x, x, W_q, W_k, W_v, W_o, h)
diff = np.abs(out - theirs.numpy()).max()
print(f"d_model = {d_model}, h = {h} -> d_k = {d_k}")
print("Q", Q.shape, "-> heads", heads.shape, "-> out", out.shape)
print("weights", w.shape)
print(f"block_diff = max|x W_q[:, 192:256] - heads[:, 3]| = {block_diff:.1e}")
print(f"diff = max|out - theirs| = {diff:.1e}")
plot("lesson3_1_heads", heat(w[0, 0], title="head 0"))

# %% step choosing_h
n = 1000
rows = [
    (
        h,
        d_model // h,
        f"{2 * h * n * n * (d_model // h) / 1e9:.2f}",  # multiply-adds of Q Kᵀ, times 2
        f"{h * n * n / 1e6:.0f}",  # one T × T table per head: softmax and memory grow with h
        f"{4 * h * n * n / 2**20:.0f}",
    )
    for h in (1, 2, 4, 8, 16, 32, 64)
]
one_head, many_heads = rows[0][-1], rows[-1][-1]  # MiB of scores at h = 1 and h = 64
print(f"T = {n}")
print(table(["h", "d_k", "GFLOP Q Kᵀ", "scores (M)", "MiB float32"], rows))

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
T, d = 50, 32
pe = ref.sinusoidal_positional_encoding(T, d)  # (T, d)
print(f"PE[0:4, 0:6] (T={T}, d={d}) =")
print(matrix(pe[:4, :6], 3))
pairs = ["s", "c"] * (d // 2)  # column labels: sin, cos, sin, cos, ...
plot(
    "lesson3_4_positional",
    heat(
        pe,
        None,
        pairs,
        xlabel="sin | cos",
        ylabel="pos",
        vmin=-1,
        vmax=1,
        cmap="RdBu",
        annotate=False,
    ),
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
rng = np.random.default_rng([SEED, 5])
W_qk = rng.standard_normal((d, d)) / np.sqrt(d)  # a random W_q W_kᵀ, as an untrained head has
scores = [round(float(pe[p + k] @ W_qk @ pe[p]), 3) for p in (0, 10, 50)]  # query k after key
back = rotation(k, d).T  # a W_q W_kᵀ a head could learn: turns every query back k positions
looks_at = [int(np.argmax(pe[i] @ back @ pe[: i + 1].T)) for i in (10, 50, 120)]
print(f"residual = max|PE[pos] M - PE[pos + {k}]| = {residual:.1e}")
print(f"exact    = max|PE[pos] R - PE[pos + {k}]| = {exact:.1e}")
print(f"dots     = PE[p] · PE[p + {k}], p = 0, 10, 50: {dots}")
print(f"scores   = the same pairs through a random W_q W_kᵀ = {scores}")
print(f"looks_at = with W_q W_kᵀ = R.T, queries at 10, 50, 120 look at {looks_at}")

# %% step beyond
pe = ref.sinusoidal_positional_encoding(1100, d)
far = np.abs(pe[1000:1090] @ rotation(k, d) - pe[1000 + k : 1090 + k]).max()
print(f"far = max|PE[1000:1090] R - PE[1003:1093]| = {far:.1e}")
print(f"PE[1000].min(), PE[1000].max() = {pe[1000].min():.3f}, {pe[1000].max():.3f}")

# %% step mha_module
import math

from torch import nn


class MultiHeadAttention(nn.Module):
    """Multi-head attention as a PyTorch module: four nn.Linear layers and a reshape."""

    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        assert d_model % num_heads == 0, "d_model must split evenly into the heads"
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def split(self, x):  # (B, T, d_model) -> (B, h, T, d_k)
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        Q = self.split(self.W_q(query))  # (B, h, T, d_k)
        K = self.split(self.W_k(key))  # (B, h, S, d_k)
        V = self.split(self.W_v(value))  # (B, h, S, d_k)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, h, T, S)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))  # mask: True = may attend
        weights = scores.softmax(dim=-1)  # (B, h, T, S)
        joined = (weights @ V).transpose(1, 2).contiguous()  # (B, T, h, d_k), stored in order
        B, T = joined.shape[:2]
        return self.W_o(joined.view(B, T, -1)), weights  # (B, T, d_model), (B, h, T, S)


torch.manual_seed(SEED)
mha = MultiHeadAttention(d_model=512, num_heads=8)
x = torch.randn(32, 100, 512)  # (B, T, d_model): 32 sequences of 100 tokens
theirs = nn.MultiheadAttention(512, 8, batch_first=True)  # PyTorch's own, given the same weights
with torch.no_grad():
    out, weights = mha(x, x, x)
    theirs.in_proj_weight.copy_(torch.cat([mha.W_q.weight, mha.W_k.weight, mha.W_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([mha.W_q.bias, mha.W_k.bias, mha.W_v.bias]))
    theirs.out_proj.load_state_dict(mha.W_o.state_dict())
    out_t, weights_t = theirs(x, x, x, average_attn_weights=False)
mha_diff = max((out - out_t).abs().max().item(), (weights - weights_t).abs().max().item())
try:
    (weights @ mha.split(x)).transpose(1, 2).view(32, 100, 512)  # view without contiguous()
except RuntimeError as error:
    view_error = str(error).split(" (")[0]
print("out", tuple(out.shape), "weights", tuple(weights.shape))
print(f"mha_diff = largest difference from nn.MultiheadAttention = {mha_diff:.1e}  (float32)")
print("without contiguous():")
print(" ", view_error)


# %% step pe_module
class PositionalEncoding(nn.Module):
    """Adds the sinusoidal encoding to (B, T, d_model) inputs, then applies dropout."""

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        position = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div_term)  # even columns
        pe[:, 1::2] = torch.cos(position * div_term)  # odd columns
        self.register_buffer("pe", pe[None])  # (1, max_len, d_model): saved, never trained

    def forward(self, x):  # (B, T, d_model)
        return self.dropout(x + self.pe[:, : x.shape[1]])


pos_enc = PositionalEncoding(d_model=512)
pe_diff = np.abs(pos_enc.pe[0, :100].numpy() - ref.sinusoidal_positional_encoding(100, 512)).max()
pos_enc.eval()  # evaluation: dropout off, the output is exactly x + pe
exact = torch.equal(pos_enc(x), x + pos_enc.pe[:, :100])
pos_enc.train()  # training: dropout zeroes about 10% and scales the rest by 1 / 0.9
dropped = (pos_enc(x) == 0).float().mean().item()
buffers = [name for name, _ in pos_enc.named_buffers()]
print("buffers:", buffers, "  parameters:", len(list(pos_enc.parameters())))
print(f"pe_diff = max|pe[:100] - ref| = {pe_diff:.1e}  (float32)")
print("eval: output == x + pe:", exact, f"  train: share of zeros = {dropped:.3f}")

# %% step recap


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
