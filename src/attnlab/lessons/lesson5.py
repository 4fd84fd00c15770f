"""Lesson 5: beyond one T×T table.

The course ends on the cost of attention: the T×T table. This lesson takes the next steps with
attnlab's own tools: why the table is the cost, the online softmax (tiled attention), merging
two halves by their log-sum-exp, the key/value cache and grouped-query attention, and a ring of
processes that each hold a piece of the sequence. Each step is checked against
``ref.scaled_dot_product_attention`` on the whole sequence.
"""

from __future__ import annotations

import time

import numpy as np

from .. import ref
from .base import Context, Lesson, Question, Step, Text, fmt_table


def _qkv(rng: np.random.Generator, T: int, d: int = 16, H: int = 1):
    return (rng.standard_normal((H, T, d)) for _ in range(3))


def the_table(ctx: Context) -> dict:
    rows, sizes = [], {}
    for T in (1_000, 4_000, 16_000, 64_000, 1_000_000):
        table = T * T * 4  # one float32 score table, one head
        sizes[T] = table
        rows.append([f"{T:,}", f"{table / 2**20:,.0f} MiB", f"{4 * T * T * 64 / 1e9:,.1f}"])
    ctx.say(
        "Attention compares every query with every key: a T x T table of scores per head. Its\n"
        "memory grows with T squared (one float32 table for one head):",
        "アテンションはすべてのクエリをすべてのキーと比べます。ヘッドごとに T x T のスコア表です。\n"
        "そのメモリは T の二乗で増えます（float32 の表一枚、ヘッド一つ）：",
    )
    ctx.say(fmt_table(["T", ctx.t("table", "表"), ctx.t("GFLOP (d=64)", "GFLOP（d=64）")], rows))
    gib, tib = sizes[64_000] / 2**30, sizes[1_000_000] / 2**40
    ctx.say(
        f"At 64,000 tokens one head's table is {gib:.1f} GiB; a million tokens would need\n"
        f"{tib:.1f} TiB. The work grows with T squared too, but it can be spread out; the memory is\n"
        "what stops a machine first. The next steps never build the whole table.",
        f"64,000 トークンでヘッド一つの表が {gib:.1f} GiB、百万トークンなら {tib:.1f} TiB になります。\n"
        "計算量も T の二乗で増えますが分散できます。先に機械を止めるのはメモリです。\n"
        "この先の方法は、表全体を一度も作りません。",
    )
    return {"bytes": sizes}


def online_softmax(ctx: Context) -> dict:
    q, k, v = _qkv(ctx.rng(), 512)
    full = ref.scaled_dot_product_attention(q, k, v, is_causal=True)
    tiled, lse = ref.tiled_attention(q, k, v, is_causal=True, block_size=64, return_lse=True)
    diff = float(np.abs(tiled - full).max())
    ctx.say(
        "Tiled attention walks the keys in blocks. For each query row it keeps three running\n"
        "numbers: the largest score so far, the sum of exp(score - largest), and the weighted sum\n"
        "of values. When a later block brings a larger score, the old sums are rescaled by\n"
        "exp(old largest - new largest). At the end, output = weighted sum / sum: the softmax,\n"
        "without ever holding a whole row.",
        "タイル化アテンションはキーをブロックごとにたどります。各クエリ行について三つの値を\n"
        "持ち続けます：これまでの最大スコア、exp(スコア - 最大) の和、値の重み付き和です。\n"
        "後のブロックでより大きいスコアが出たら、古い和を exp(古い最大 - 新しい最大) で縮めます。\n"
        "最後に 出力 = 重み付き和 / 和 とすれば softmax になり、行全体を持つ必要がありません。",
    )
    table, tile = 512 * 512 * 8, 64 * 64 * 8
    ctx.say(
        f"  T = 512, blocks of 64: {512 // 64} x {512 // 64} tiles, the upper ones skipped (causal)\n"
        f"  largest tile {tile // 1024} KiB instead of the {table // 1024} KiB table (float64)\n"
        f"  max |tiled - whole-table attention| = {diff:.1e}",
        f"  T = 512、ブロック 64：{512 // 64} x {512 // 64} 枚のタイル、上側は省略（因果）\n"
        f"  最大のタイルは {tile // 1024} KiB、表なら {table // 1024} KiB（float64）\n"
        f"  最大 |タイル化 - 表全体のアテンション| = {diff:.1e}",
    )
    return {"diff": diff, "lse": lse}


def merge_halves(ctx: Context) -> dict:
    q, k, v = _qkv(ctx.rng(), 8, d=4)
    full = ref.scaled_dot_product_attention(q, k, v)
    parts = [
        ref.tiled_attention(q, k[:, sl], v[:, sl], return_lse=True)
        for sl in (slice(0, 4), slice(4, 8))
    ]
    merged, lse = ref.merge_attention(parts)
    diff = float(np.abs(merged - full).max())
    (_, l1), (_, l2) = parts
    ctx.say(
        "Attention over keys 0-3 and over keys 4-7 can be computed apart and joined exactly. Each\n"
        "part keeps, per query, its log-sum-exp: lse = log(sum of exp(scores)). The union's lse is\n"
        "logaddexp(lse1, lse2), and its output is out1 * exp(lse1 - lse) + out2 * exp(lse2 - lse).",
        "キー 0-3 とキー 4-7 へのアテンションは別々に計算して、正確につなげられます。各部分は\n"
        "クエリごとに log-sum-exp（lse = log(exp(スコア) の和)）を持ちます。全体の lse は\n"
        "logaddexp(lse1, lse2)、出力は out1 * exp(lse1 - lse) + out2 * exp(lse2 - lse) です。",
    )
    w1 = float(np.exp(l1[0, 0] - lse[0, 0]))
    ctx.say(
        f"  query 0: lse1 = {l1[0, 0]:.4f}, lse2 = {l2[0, 0]:.4f}, lse = {lse[0, 0]:.4f}; "
        f"the first half weighs {w1:.3f}, the second {1 - w1:.3f}\n"
        f"  max |merged - whole attention| = {diff:.1e}",
        f"  クエリ 0：lse1 = {l1[0, 0]:.4f}、lse2 = {l2[0, 0]:.4f}、lse = {lse[0, 0]:.4f}。"
        f"前半の重みは {w1:.3f}、後半は {1 - w1:.3f}\n"
        f"  最大 |合成 - 全体のアテンション| = {diff:.1e}",
    )
    return {"diff": diff, "weight_first": w1}


def kv_cache(ctx: Context) -> dict:
    import torch

    from ..nn import KVCache

    layers, T, d_k = 6, 1024, 64
    rows, nbytes = [], {}
    for heads, kv_heads, name in (
        (8, 8, "multi-head"),
        (8, 2, "grouped-query"),
        (8, 1, "multi-query"),
    ):
        caches = [KVCache(T) for _ in range(layers)]
        for c in caches:
            c.append(torch.zeros(1, kv_heads, T, d_k), torch.zeros(1, kv_heads, T, d_k))
        size = sum(t.nbytes for c in caches for t in (c.k, c.v))  # the tensors, measured
        nbytes[name] = size
        rows.append([name, heads, kv_heads, f"{size / 2**20:.0f} MiB"])
    ctx.say(
        "When a model writes one token at a time, the keys and values of earlier tokens do not\n"
        "change: it keeps them in a cache and computes only the new token's. The cache is what\n"
        "grows with the context. Grouped-query attention lets several query heads share one\n"
        "key/value head; the cache shrinks by the group size. Measured on attnlab's KVCache\n"
        f"({layers} layers, {T} tokens, d_k {d_k}, float32):",
        "モデルが一トークンずつ書くとき、前のトークンのキーと値は変わりません。キャッシュに\n"
        "取っておき、新しいトークンの分だけ計算します。文脈とともに増えるのはこのキャッシュです。\n"
        "グループ化クエリアテンションでは複数のクエリヘッドが一つのキー・値ヘッドを共有し、\n"
        f"キャッシュはグループの大きさ分だけ小さくなります。attnlab の KVCache で測定（{layers} 層、\n"
        f"{T} トークン、d_k {d_k}、float32）：",
    )
    ctx.say(fmt_table([ctx.t("kind", "種類"), "H", "H_kv", ctx.t("cache", "キャッシュ")], rows))
    return {"bytes": nbytes}


def ring(ctx: Context) -> dict:
    N, T = 4, 16
    q, k, v = _qkv(ctx.rng(), T, d=4)
    full = ref.scaled_dot_product_attention(q, k, v, is_causal=True)
    shard = T // N
    ranges = [slice(r * shard, (r + 1) * shard) for r in range(N)]
    outs, held = [], []
    for r, mine in enumerate(ranges):  # each rank, simulated in this process
        parts, order = [], []
        for step in range(N):
            src = (r - step) % N  # the block that reached rank r at this step
            order.append(src)
            if src > r:
                continue  # a block wholly in the future: nothing to compute under the causal mask
            mask = np.arange(mine.start, mine.stop)[:, None] >= np.arange(
                ranges[src].start, ranges[src].stop
            )
            parts.append(
                ref.tiled_attention(
                    q[:, mine],
                    k[:, ranges[src]],
                    v[:, ranges[src]],
                    attn_mask=mask,
                    return_lse=True,
                )
            )
        outs.append(ref.merge_attention(parts)[0])
        held.append(order)
    diff = float(np.abs(np.concatenate(outs, axis=1) - full).max())
    ctx.say(
        "Past one machine's memory, split the sequence: rank r holds queries, keys and values for\n"
        "its own piece. The key/value pieces travel around a ring: at each step every rank sends\n"
        "the block it holds to the next rank and attends its queries to the block it received,\n"
        "merging by log-sum-exp as above. After N steps every rank has seen every key. Simulated\n"
        f"here with N = {N} ranks, T = {T} (the block each rank holds, step by step):",
        "一台のメモリを超えたら、系列を分けます。ランク r は自分の区間のクエリ・キー・値を持ちます。\n"
        "キーと値の区間は輪になって回ります。各ステップで全ランクが手元のブロックを次のランクへ送り、\n"
        "受け取ったブロックに自分のクエリで注意し、上と同じく log-sum-exp で合成します。N ステップで\n"
        f"全ランクがすべてのキーを見ます。ここでは N = {N} ランク、T = {T} で模擬します\n"
        "（各ランクがステップごとに持つブロック）：",
    )
    ctx.say(
        fmt_table(
            [ctx.t("rank", "ランク"), *[ctx.t(f"step {s}", f"ステップ {s}") for s in range(N)]],
            [[r, *held[r]] for r in range(N)],
        )
    )
    work = [sum(1 for src in range(N) if src <= r) for r in range(N)]
    ctx.say(
        f"  max |ring - whole attention| = {diff:.1e}\n"
        f"  blocks each rank computes under the causal mask: {work} (rank 0 idles; the zigzag\n"
        "  layout gives each rank one early and one late chunk and evens this out)\n"
        "  for real, across processes: attnlab.nn.ring_attention, 'torchrun --nproc_per_node=2\n"
        "  -m attnlab train gpt --context-parallel 2', and 'attnlab bench --ring 2'.",
        f"  最大 |リング - 全体のアテンション| = {diff:.1e}\n"
        f"  因果マスクのもとで各ランクが計算するブロック数：{work}（ランク 0 は手が空きます。\n"
        "  zigzag 配置は各ランクに前と後ろの区間を一つずつ渡して、これを均します）\n"
        "  本物のプロセス間では：attnlab.nn.ring_attention、'torchrun --nproc_per_node=2\n"
        "  -m attnlab train gpt --context-parallel 2'、'attnlab bench --ring 2'。",
    )
    return {"diff": diff, "held": held, "work": work}


def ex_time_the_table(ctx: Context) -> dict:
    rng = ctx.rng()
    times = {}
    for T in (512, 1024, 2048):
        q, k, v = _qkv(rng, T, d=64, H=4)
        start = time.perf_counter()
        ref.scaled_dot_product_attention(q, k, v, is_causal=True)
        t_full = time.perf_counter() - start
        start = time.perf_counter()
        ref.tiled_attention(q, k, v, is_causal=True)
        times[T] = (t_full, time.perf_counter() - start)
    ctx.say(
        "Time the whole table against the tiles as T doubles (your machine, this run):",
        "T を倍にしながら、表全体とタイルの時間を測ります（この機械、この実行）：",
    )
    ctx.say(
        fmt_table(
            ["T", ctx.t("whole table s", "表全体 s"), ctx.t("tiled s", "タイル s")],
            [[T, f"{a:.3f}", f"{b:.3f}"] for T, (a, b) in times.items()],
        )
    )
    ctx.say(
        "Both grow about 4x per doubling: tiling saves memory, not work. The work is what the\n"
        "ring spreads over processes.",
        "どちらも倍ごとに約 4 倍になります。タイル化が節約するのはメモリで、計算量ではありません。\n"
        "計算量を複数のプロセスに分けるのがリングです。",
    )
    return {"times": times}


LESSON = Lesson(
    number=5,
    title=Text("Beyond one T×T table", "T×T の表を超えて"),
    summary=Text(
        "the table's cost, the online softmax, merging by log-sum-exp, KV cache and GQA, a ring",
        "表のコスト、オンライン softmax、log-sum-exp による合成、KV キャッシュと GQA、リング",
    ),
    source="lesson-attention.txt (its last section: the cost of attention)",
    intro=Text(
        "The first lesson ended on the T x T table: attention's whole cost sits in it. This one\n"
        "shows how models read long inputs anyway, one idea at a time, each checked against plain\n"
        "attention on the whole sequence.",
        "最初の講座は T x T の表で終わりました。アテンションのコストはすべてそこにあります。\n"
        "この講座では、長い入力をそれでも読む方法を一つずつ見ていきます。どれも系列全体への\n"
        "普通のアテンションと照らし合わせて確かめます。",
    ),
    sections=[
        Step(Text("The table is the cost", "コストは表にある"), the_table),
        Step(Text("The online softmax", "オンライン softmax"), online_softmax),
        Step(Text("Merging two halves", "二つの半分を合成する"), merge_halves),
        Step(Text("The KV cache and GQA", "KV キャッシュと GQA"), kv_cache),
        Step(Text("A ring of processes", "プロセスのリング"), ring),
    ],
    exercises=[
        Step(Text("Time the table and the tiles", "表とタイルの時間を測る"), ex_time_the_table)
    ],
    quiz=[
        Question(
            Text(
                "What does the online softmax keep per query row instead of the row of scores?",
                "オンライン softmax は、スコアの行の代わりにクエリ行ごとに何を持ちますか？",
            ),
            Text(
                "The largest score so far, the running sum of exp(score - largest) and the running\n"
                "weighted sum of values; rescaled when a larger score arrives.",
                "これまでの最大スコア、exp(スコア - 最大) の累積和、値の累積重み付き和です。\n"
                "より大きいスコアが来たら縮め直します。",
            ),
        ),
        Question(
            Text(
                "Why does grouped-query attention shrink the KV cache?",
                "グループ化クエリアテンションはなぜ KV キャッシュを小さくするのですか？",
            ),
            Text(
                "Several query heads share one key/value head, so only H_kv heads of keys and\n"
                "values are stored: the cache shrinks by H / H_kv.",
                "複数のクエリヘッドが一つのキー・値ヘッドを共有するので、保存するのは H_kv 個分だけです。\n"
                "キャッシュは H / H_kv 分の一になります。",
            ),
        ),
        Question(
            Text(
                "In ring attention, what travels between processes, and what stays?",
                "リングアテンションでは、プロセス間を何が移動し、何がとどまりますか？",
            ),
            Text(
                "Keys and values travel around the ring; each rank's queries and its running\n"
                "output and log-sum-exp stay where they are.",
                "キーと値が輪を回ります。各ランクのクエリと、途中の出力と log-sum-exp はその場にとどまります。",
            ),
        ),
    ],
)
