# Lesson 5: beyond one T x T table: tiles, merging, the KV cache and a ring of processes.
# The prose of each step is in en.md, ja.md and zh.md beside this file.

# %% setup
import numpy as np

from attnlab import ref
from attnlab.grade import check
from attnlab.lessons import check_answer, quiz
from attnlab.lessons.show import table

SEED = 0
LANG = "en"
TIMED = (512, 1024, 2048)  # the lengths the tiles exercise times, each twice the one before

# %% step the_table
sizes = {
    n: n * n * 4 for n in (1_000, 4_000, 16_000, 64_000, 1_000_000)
}  # bytes: float32, one head
print(
    table(
        ["T", "T × T, float32", "GFLOP (d=64)"],
        [
            (f"{n:,}", f"{b / 2**20:,.0f} MiB", f"{4 * n * n * 64 / 1e9:,.1f}")
            for n, b in sizes.items()
        ],
    )
)
gib, tib = sizes[64_000] / 2**30, sizes[1_000_000] / 2**40

# %% step online_softmax
rng = np.random.default_rng([SEED, 2])
q, k, v = rng.standard_normal((3, 1, 512, 16))  # (H, T, d) each
full = ref.scaled_dot_product_attention(q, k, v, is_causal=True)  # builds the 512 x 512 table
tiled = ref.tiled_attention(q, k, v, is_causal=True, block_size=64)  # 64 x 64 tiles at most
diff = np.abs(tiled - full).max()
print("T, block_size, tiles =", 512, 64, (512 // 64) ** 2)
print("KiB of one tile, of the table (float64) =", 64 * 64 * 8 // 1024, 512 * 512 * 8 // 1024)
print(f"diff = max|tiled - full| = {diff:.1e}")

# %% step merge_halves
rng = np.random.default_rng([SEED, 3])
q, k, v = rng.standard_normal((3, 1, 8, 4))  # (H, T, d)
full = ref.scaled_dot_product_attention(q, k, v)
out1, lse1 = ref.tiled_attention(q, k[:, :4], v[:, :4], return_lse=True)  # keys 0-3
out2, lse2 = ref.tiled_attention(q, k[:, 4:], v[:, 4:], return_lse=True)  # keys 4-7
lse = np.logaddexp(lse1, lse2)  # (H, T): the log-sum-exp of all eight keys
merged = out1 * np.exp(lse1 - lse)[..., None] + out2 * np.exp(lse2 - lse)[..., None]
first = np.exp(lse1[0, 0] - lse[0, 0])  # how much of query 0's weight lies in keys 0-3
print(f"query 0: lse1 = {lse1[0, 0]:.4f}, lse2 = {lse2[0, 0]:.4f}, lse = {lse[0, 0]:.4f}")
print(f"first = {first:.3f}, 1 - first = {1 - first:.3f}")
print(f"max|merged - full| = {np.abs(merged - full).max():.1e}")

# %% step kv_cache
import torch

from attnlab.nn import KVCache

layers, n, d_k = 6, 1024, 64
rows, nbytes = [], {}
for name, heads, kv_heads in (("multi-head", 8, 8), ("grouped-query", 8, 2), ("multi-query", 8, 1)):
    caches = [KVCache(n) for _ in range(layers)]
    for c in caches:
        c.append(torch.zeros(1, kv_heads, n, d_k), torch.zeros(1, kv_heads, n, d_k))
    nbytes[name] = sum(t.nbytes for c in caches for t in (c.k, c.v))  # the tensors, measured
    rows.append((name, heads, kv_heads, f"{nbytes[name] / 2**20:.0f} MiB"))
print(table(["", "heads", "kv_heads", "nbytes"], rows))

# %% step ring
N, T = 4, 16
rng = np.random.default_rng([SEED, 5])
q, k, v = rng.standard_normal((3, 1, T, 4))  # (H, T, d)
full = ref.scaled_dot_product_attention(q, k, v, is_causal=True)
piece = [slice(r * T // N, (r + 1) * T // N) for r in range(N)]  # rank r's part of the sequence
outs, held = [], []
for r in range(N):  # every rank, simulated here one after another
    parts, order = [], []
    for step in range(N):
        src = (r - step) % N  # the key/value block that reached rank r at this step
        order.append(src)
        if src > r:
            continue  # a block wholly in the future: nothing to do under the causal mask
        mask = np.arange(T)[piece[r], None] >= np.arange(T)[None, piece[src]]
        parts.append(
            ref.tiled_attention(
                q[:, piece[r]], k[:, piece[src]], v[:, piece[src]], attn_mask=mask, return_lse=True
            )
        )
    outs.append(ref.merge_attention(parts)[0])
    held.append(order)
ring_diff = np.abs(np.concatenate(outs, axis=1) - full).max()
work = [sum(src <= r for src in range(N)) for r in range(N)]
print(table(["rank", *(f"step {s}" for s in range(N))], [[r, *held[r]] for r in range(N)]))
print(f"ring_diff = max|ring - full| = {ring_diff:.1e}")
print("work =", work)

# %% step recap

# %% exercise tiles answer=times compare=structure
import time

rng = np.random.default_rng([SEED, 101])
times = {}
for n in TIMED[:1]:  # TODO: every n in TIMED, and time ref.tiled_attention beside it
    q, k, v = rng.standard_normal((3, 4, n, 64))  # (H, T, d)
    start = time.perf_counter()
    ref.scaled_dot_product_attention(q, k, v, is_causal=True)
    times[n] = (time.perf_counter() - start,)
print(table(["T", "full, s"], [(n, f"{t[0]:.3f}") for n, t in times.items()]))

# %% solution tiles
import time

rng = np.random.default_rng([SEED, 101])
times = {}
for n in TIMED:
    q, k, v = rng.standard_normal((3, 4, n, 64))  # (H, T, d)
    start = time.perf_counter()
    ref.scaled_dot_product_attention(q, k, v, is_causal=True)
    middle = time.perf_counter()
    ref.tiled_attention(q, k, v, is_causal=True)
    times[n] = (middle - start, time.perf_counter() - middle)
print(
    table(
        ["T", "full, s", "tiled, s"],
        [(n, f"{a:.3f}", f"{b:.3f}") for n, (a, b) in times.items()],
    )
)
first, last = times[TIMED[0]], times[TIMED[-1]]  # (full, tiled) seconds
growth_full = (last[0] / first[0]) ** (1 / (len(TIMED) - 1))  # per doubling of T
growth_tiled = (last[1] / first[1]) ** (1 / (len(TIMED) - 1))
fourfold = all(3 <= g <= 5 for g in (growth_full, growth_tiled))  # T² work: x4 per doubling

# %% exercise three answer=merged3
rng = np.random.default_rng([SEED, 102])
q, k, v = rng.standard_normal((3, 1, 12, 4))  # (H, T, d)
out_a, lse_a = ref.tiled_attention(q, k[:, 0:4], v[:, 0:4], return_lse=True)  # keys 0-3
out_b, lse_b = ref.tiled_attention(q, k[:, 4:8], v[:, 4:8], return_lse=True)  # keys 4-7
out_c, lse_c = ref.tiled_attention(q, k[:, 8:12], v[:, 8:12], return_lse=True)  # keys 8-11
lse3 = np.logaddexp(lse_a, lse_b)  # TODO: the log-sum-exp of all three parts
merged3 = out_a * np.exp(lse_a - lse3)[..., None] + out_b * np.exp(lse_b - lse3)[..., None]  # TODO
whole = ref.scaled_dot_product_attention(q, k, v)
print(f"max|merged3 - whole| = {np.abs(merged3 - whole).max():.1e}")

# %% solution three
rng = np.random.default_rng([SEED, 102])
q, k, v = rng.standard_normal((3, 1, 12, 4))  # (H, T, d)
parts = [
    ref.tiled_attention(q, k[:, i : i + 4], v[:, i : i + 4], return_lse=True) for i in (0, 4, 8)
]
lse3 = np.logaddexp.reduce([lse for _, lse in parts])  # (H, T)
merged3 = sum(out * np.exp(lse - lse3)[..., None] for out, lse in parts)
whole = ref.scaled_dot_product_attention(q, k, v)
print(f"max|merged3 - whole| = {np.abs(merged3 - whole).max():.1e}")

# %% mistake three average
rng = np.random.default_rng([SEED, 102])
q, k, v = rng.standard_normal((3, 1, 12, 4))
parts = [
    ref.tiled_attention(q, k[:, i : i + 4], v[:, i : i + 4], return_lse=True) for i in (0, 4, 8)
]
merged3 = sum(out for out, _ in parts) / 3  # each part counted the same, whatever its weight
