# Lesson 6: the Transformer block and a language model, trained live.
# The prose of each step is in en.md, ja.md and zh.md beside this file.

# %% setup
import math
from dataclasses import replace
from importlib.resources import files

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attnlab.data import CharTokenizer, TokenData, load_corpus
from attnlab.explore.heads import LIFT, MIN_SHARE, PATTERNS, shares
from attnlab.lessons import check_answer, quiz
from attnlab.lessons.show import bars, curve, heat, plot, table
from attnlab.models import GPT, CharRNN, GPTConfig, RNNConfig
from attnlab.models.gpt import Block as GPTBlock
from attnlab.nn import MultiHeadAttention
from attnlab.train import LMTask, TrainConfig, Trainer

SEED = 0
LANG = "en"
STEPS = 150  # training steps of the GPT trained live here: a short curve to watch
SHIPPED_STEPS = 1500  # the steps each shipped model trained for, by this same code
FULL = STEPS >= SHIPPED_STEPS or SEED != 0  # True: study models trained live, not shipped ones
SEEDS = 2  # the comparison table has each model from this many seeds
LABELS = {  # figure titles and axis labels, in the lesson's language
    "en": [
        "encoder (BERT): sees both sides",
        "decoder (GPT): sees only the past",
        "query",
        "key",
        "training step",
        "loss (nats)",
        "train (smoothed)",
        "validation",
        "layer",
        "head",
    ],
    "ja": [
        "エンコーダ（BERT）：両側を見る",
        "デコーダ（GPT）：過去だけを見る",
        "クエリ",
        "キー",
        "学習ステップ",
        "損失（nats）",
        "学習（平滑化）",
        "検証",
        "層",
        "ヘッド",
    ],
    "zh": [
        "编码器（BERT）：看两侧",
        "解码器（GPT）：只看过去",
        "查询",
        "键",
        "训练步数",
        "损失（nats）",
        "训练（平滑）",
        "验证",
        "层",
        "头",
    ],
}[LANG]
WORDS = {  # what the lesson prints, in its language
    "en": {
        "names": {"gpt": "GPT", "rnn": "RNN", "lstm": "LSTM", "gru": "GRU"},
        "block": "block(x).shape = {}  parameters: {}",
        "ln": "after LayerNorm: |mean| <= {:.1e}, std = {:.3f}",
        "same": "our block vs attnlab's GPT block: max difference {:.1e}",
        "grad": "gradient at the input of 12 blocks: with residuals {:.2e}, without {:.2e}",
        "moved": ["", "mask", "positions changed"],
        "masks": {"encoder": ("encoder", "all True"), "decoder": ("decoder", "lower triangle")},
        "bert": "BERT reads {!r} and must fill {}",
        "gpt": "GPT reads {!r} and predicts, at each of {} positions, the next:",
        "shifted": "(x shifted by one: the next character at each position)",
        "corpus": "{:,} characters, vocabulary {}, GPT with {:,} parameters",
        "untrained": "untrained loss {:.3f}; ln(vocabulary) = {:.3f}",
        "curve": ["step", "train loss", "val loss", "val perplexity"],
        "studied": [
            "studied below: the shipped GPT, {} steps",
            "studied below: this GPT, {} steps",
        ],
        "val": "its validation loss, measured here: {:.3f}",
        "ppl": ["model", "perplexity"],
        "ppl_rows": ["uniform guess", "character frequencies", "untrained GPT", "studied GPT"],
        "sample": "T = {}: {!r}  ({:.0%} real words)",
        "spread": ["T", "top probability", "entropy (nats)"],
        "patterns": {
            "previous": "previous",
            "first": "first",
            "space": "space",
            "line_start": "line start",
        },
        "heads": ["pattern", "best (layer, head)", "its weight there", "even attention", "ratio"],
        "pairs": "layer {}, head {}: each character and the one it attends to most",
        "table": ["model", "parameters", "seed {}", "mean", "spread"],
        "reach": "gradient 32 steps back / at the last step: {}",
    },
    "ja": {
        "names": {"gpt": "GPT", "rnn": "RNN", "lstm": "LSTM", "gru": "GRU"},
        "block": "block(x).shape = {}  パラメータ数：{}",
        "ln": "LayerNorm の後：|平均| <= {:.1e}、標準偏差 = {:.3f}",
        "same": "自作のブロックと attnlab の GPT のブロックの差の最大値：{:.1e}",
        "grad": "12 ブロックの入力での勾配：残差接続あり {:.2e}、なし {:.2e}",
        "moved": ["", "マスク", "変わった位置"],
        "masks": {"encoder": ("エンコーダ", "すべて True"), "decoder": ("デコーダ", "下三角")},
        "bert": "BERT は {!r} を読み、{} を埋める",
        "gpt": "GPT は {!r} を読み、{} 個の位置それぞれで次の文字を予測する：",
        "shifted": "（x を一つずらしたもの：各位置の次の文字）",
        "corpus": "{:,} 文字、語彙 {}、GPT のパラメータ数 {:,}",
        "untrained": "学習前の損失 {:.3f}、ln(語彙数) = {:.3f}",
        "curve": ["ステップ", "学習損失", "検証損失", "検証パープレキシティ"],
        "studied": [
            "以下で調べるのは同梱の GPT（{} ステップ）",
            "以下で調べるのはこの GPT（{} ステップ）",
        ],
        "val": "その検証損失（ここで計算）：{:.3f}",
        "ppl": ["モデル", "パープレキシティ"],
        "ppl_rows": ["一様な推測", "文字の頻度", "学習前の GPT", "調べる GPT"],
        "sample": "T = {}：{!r}（実在の単語 {:.0%}）",
        "spread": ["T", "最大の確率", "エントロピー（nats）"],
        "patterns": {
            "previous": "直前の文字",
            "first": "最初の文字",
            "space": "直前の空白",
            "line_start": "行頭",
        },
        "heads": ["パターン", "最良（層、ヘッド）", "そこへの重み", "均等なアテンション", "倍率"],
        "pairs": "層 {}、ヘッド {}：各文字と、いちばん重みを置く文字",
        "table": ["モデル", "パラメータ数", "シード {}", "平均", "ばらつき"],
        "reach": "32 ステップ前の勾配 / 最後のステップの勾配：{}",
    },
    "zh": {
        "names": {"gpt": "GPT", "rnn": "RNN", "lstm": "LSTM", "gru": "GRU"},
        "block": "block(x).shape = {}  参数量：{}",
        "ln": "LayerNorm 之后：|均值| <= {:.1e}，标准差 = {:.3f}",
        "same": "我们的块与 attnlab 的 GPT 块之间的最大差：{:.1e}",
        "grad": "12 个块输入处的梯度：有残差连接 {:.2e}，没有 {:.2e}",
        "moved": ["", "掩码", "变化的位置"],
        "masks": {"encoder": ("编码器", "全为 True"), "decoder": ("解码器", "下三角")},
        "bert": "BERT 读入 {!r}，要填出 {}",
        "gpt": "GPT 读入 {!r}，在 {} 个位置上各预测下一个字符：",
        "shifted": "（x 移一位：每个位置的下一个字符）",
        "corpus": "{:,} 个字符，词表 {}，GPT 参数量 {:,}",
        "untrained": "训练前的损失 {:.3f}；ln(词表大小) = {:.3f}",
        "curve": ["步数", "训练损失", "验证损失", "验证困惑度"],
        "studied": ["下面研究的是随附的 GPT（{} 步）", "下面研究的是这个 GPT（{} 步）"],
        "val": "它的验证损失（在这里计算）：{:.3f}",
        "ppl": ["模型", "困惑度"],
        "ppl_rows": ["均匀猜测", "字符频率", "训练前的 GPT", "研究的 GPT"],
        "sample": "T = {}：{!r}（真实单词 {:.0%}）",
        "spread": ["T", "最大概率", "熵（nats）"],
        "patterns": {
            "previous": "前一个字符",
            "first": "第一个字符",
            "space": "前面的空格",
            "line_start": "行首",
        },
        "heads": ["模式", "最佳（层，头）", "放在那里的权重", "均匀注意力", "倍数"],
        "pairs": "第 {} 层，第 {} 个头：每个字符和它权重最大的字符",
        "table": ["模型", "参数量", "种子 {}", "平均", "差距"],
        "reach": "32 步之前的梯度 / 最后一步的梯度：{}",
    },
}[LANG]
NAMES = WORDS["names"]  # the models of the table, as it names them
torch.manual_seed(SEED)
torch.set_num_threads(1)  # one thread, a fixed seed and a step count: the same numbers anywhere

# %% step block
C, H, T = 32, 4, 8  # width, heads, positions


class FeedForward(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.fc, self.proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

    def forward(self, x):  # (B, T, C) -> (B, T, C), each position on its own
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, C, H):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(C), MultiHeadAttention(C, H)
        self.ln_2, self.mlp = nn.LayerNorm(C), FeedForward(C)

    def forward(self, x, mask=None):  # mask (T, T): True = may attend
        x = x + self.attn(self.ln_1(x), attn_mask=mask)  # residual: add what attention found
        return x + self.mlp(self.ln_2(x))  # residual: add what the feed-forward layer made


block = Block(C, H)
x = torch.randn(2, T, C)  # (B, T, C): two sequences of 8 positions
normed = block.ln_1(x)  # each position's vector: mean 0, spread 1
ln_mean = normed.mean(-1).abs().max().item()
ln_std = normed.std(-1, unbiased=False).mean().item()
theirs = GPTBlock(GPTConfig(n_embd=C, n_head=H))  # the block attnlab's GPT stacks
block.load_state_dict(theirs.state_dict())  # the same parameter names: the same weights
causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
same_as_gpt = (block(x, causal) - theirs(x)[0]).abs().max().item()
stack = nn.ModuleList(Block(C, H) for _ in range(12))  # stacking: twelve blocks


def through(x, residual=True):
    for b in stack:
        a = b.attn(b.ln_1(x), attn_mask=causal)
        x = x + a if residual else a
        m = b.mlp(b.ln_2(x))
        x = x + m if residual else m
    return x


grads = []
for residual in (True, False):
    x0 = x.clone().requires_grad_()
    through(x0, residual).pow(2).mean().backward()
    grads.append(x0.grad.norm().item())  # how much reaches the input, 24 layers down
grad_res, grad_plain = grads
n_block = sum(p.numel() for p in block.parameters())
print(WORDS["block"].format(tuple(block(x).shape), n_block))
print(WORDS["ln"].format(ln_mean, ln_std))
print(WORDS["same"].format(same_as_gpt))
print(WORDS["grad"].format(grad_res, grad_plain))

# %% step encoder_decoder
full = torch.ones(T, T, dtype=torch.bool)  # encoder (BERT): every position sees every other
masks = {"encoder": full, "decoder": causal}  # decoder (GPT): position t sees 0..t
x2 = x.clone()
x2[:, -1] = torch.randn(C)  # a new vector at the last position, nothing else changed
moved, weights = {}, {}
with torch.no_grad():
    for name, mask in masks.items():
        diff = (block(x2, mask) - block(x, mask)).abs().amax(-1)[0]  # (T,): how far each moved
        moved[name] = int((diff > 1e-6).sum())
        _, w = block.attn(block.ln_1(x), attn_mask=mask, need_weights=True)  # (B, H, T, T)
        weights[name] = w[0, 0].numpy()
print(
    table(
        WORDS["moved"],
        [(*WORDS["masks"][name], f"{moved[name]} / {T}") for name in masks],
    )
)
moved_enc, moved_dec = moved["encoder"], moved["decoder"]
sentence = "the cat sat on the mat"
hidden_at = [4, 19]  # BERT's objective: hide a few tokens, predict them from both sides
bert_input = "".join("_" if i in hidden_at else c for i, c in enumerate(sentence))
bert_targets = {i: sentence[i] for i in hidden_at}
# GPT's objective: the next token, at every position
gpt_targets = [(sentence[i], sentence[i + 1]) for i in range(len(sentence) - 1)]
bert_fill = ", ".join(repr(c) for c in bert_targets.values())
n_next, n_sentence = len(gpt_targets), len(sentence)
print(WORDS["bert"].format(bert_input, bert_targets))
print(WORDS["gpt"].format(sentence, len(gpt_targets)))
print("  " + "  ".join(f"{a}>{b}" for a, b in gpt_targets[:8]) + "  ...")
plot(
    "lesson6_2_encoder",
    heat(weights["encoder"], title=LABELS[0], ylabel=LABELS[2], xlabel=LABELS[3]),
)
plot(
    "lesson6_2_decoder",
    heat(weights["decoder"], title=LABELS[1], ylabel=LABELS[2], xlabel=LABELS[3]),
)

# %% step language_model
text = load_corpus()  # the built-in corpus: Python's reference manual, shipped with Python
tok = CharTokenizer.from_text(text)
data = TokenData.from_text(text, tok)  # 90% to train on, 10% to validate
BLOCK = 64  # characters of context
xb, yb = data.batch("train", 1, 12, torch.Generator().manual_seed(SEED))
print("x:", repr(tok.decode(xb[0])))
print("y:", repr(tok.decode(yb[0])), WORDS["shifted"])
cfg = GPTConfig(vocab_size=tok.vocab_size, block_size=BLOCK, n_layer=2, n_head=4, n_embd=64)
torch.manual_seed(SEED)
model = GPT(cfg)
with torch.no_grad():
    loss0 = model(*data.batch("val", 16, BLOCK, torch.Generator().manual_seed(SEED)))[1].item()
vocab, n_chars, n_params = tok.vocab_size, len(text), model.num_params()
log_vocab = math.log(vocab)
print(WORDS["corpus"].format(n_chars, vocab, n_params))
print(WORDS["untrained"].format(loss0, log_vocab))

# %% step train_gpt
train = TrainConfig(
    max_iters=STEPS,  # a fixed number of steps, whatever the machine's speed
    batch_size=32,
    lr=3e-3,
    min_lr=3e-4,
    warmup_iters=20,
    eval_interval=max(1, STEPS // 5),
    eval_iters=8,
    log_interval=10**9,
    seed=SEED,
)
task = LMTask(data, BLOCK)
result = Trainer(train, None, progress=False).fit(model, task)
evals = result.evals  # five along the way, and one at the end
losses = np.array(result.train_losses)
smooth = np.convolve(losses, np.ones(20) / 20, mode="valid") if len(losses) >= 20 else losses
first, last = evals[0]["val_loss"], evals[-1]["val_loss"]
steps = result.iters
improved = last < first - 0.5  # the validation loss fell clearly (half a nat or more)
print(
    table(
        WORDS["curve"],
        [
            (e["iter"], f"{e['train_loss']:.3f}", f"{e['val_loss']:.3f}", f"{e['val_ppl']:.2f}")
            for e in evals
        ],
    )
)
steps_at = np.arange(len(smooth)) + len(losses) - len(smooth)  # the step each point ends at
val_curve = ([e["iter"] for e in evals], [e["val_loss"] for e in evals])
curves = {LABELS[6]: (steps_at, smooth), LABELS[7]: val_curve}
plot("lesson6_4_loss", curve(curves, xlabel=LABELS[4], ylabel=LABELS[5]))
live = model  # the GPT trained here, for STEPS steps
if not FULL:  # the shipped models: trained by this code with STEPS = SHIPPED_STEPS
    with (files("attnlab.lessons") / "content" / "lesson6" / "weights.pt").open("rb") as f:
        shipped = torch.load(f, weights_only=True)  # tensors only: no code runs on loading
    model = GPT(cfg)
    model.load_state_dict({k: v.float() for k, v in shipped[f"gpt/{SEED}"].items()})
studied_steps = steps if FULL else shipped["steps"]
gens = [torch.Generator().manual_seed(SEED + i) for i in range(8)]
val_batches = [data.batch("val", 32, BLOCK, g) for g in gens]  # (32, BLOCK) each, fixed


def val_loss(m):  # the mean loss on the same validation batches, for any model
    m.eval()
    with torch.no_grad():
        return float(np.mean([m(xv, yv)[1].item() for xv, yv in val_batches]))


studied = val_loss(model)  # recomputed here from the weights studied below
print(WORDS["studied"][FULL].format(studied_steps))
print(WORDS["val"].format(studied))

# %% step perplexity
counts = torch.bincount(data.train, minlength=vocab).double()
p = counts / counts.sum()  # how often each character occurs
unigram = -(p[p > 0] * p[p > 0].log()).sum().item()  # the best loss without any context
ppl_uniform, ppl_unigram = vocab, math.exp(unigram)
ppl_start, ppl_final = math.exp(loss0), math.exp(studied)
ppl = dict(zip(WORDS["ppl_rows"], (ppl_uniform, ppl_unigram, ppl_start, ppl_final), strict=True))
print(table(WORDS["ppl"], [(name, f"{v:.2f}") for name, v in ppl.items()]))
uses_context = ppl_final < ppl_unigram  # below the best a model without context can do

# %% step temperature
model.eval()
prompt = "The "
ids = torch.tensor([tok.encode(prompt)])
with torch.no_grad():
    logits = model(ids)[0][0, -1]  # (vocab,): the scores for the character after the prompt
spread = {}
for temp in (0.5, 1.0, 2.0):
    probs = torch.softmax(logits / temp, -1)
    spread[temp] = (probs.max().item(), -(probs * probs.log()).sum().item())
samples = {}
for temp in (0.0, 0.5, 1.0, 2.0):  # 0: always the most likely character
    g = torch.Generator().manual_seed(SEED)
    new = torch.cat(list(model.generate(ids, 80, temperature=temp, generator=g)))
    samples[temp] = prompt + tok.decode(new.tolist())
known = set(text.split())  # every word of the training text
real = {}  # the share of a sample's words that occur in the training text
for temp, s in samples.items():
    words = s.split()[:-1]  # the last word may be cut off
    real[temp] = sum(w in known for w in words) / max(1, len(words))
    print(WORDS["sample"].format(temp, s, real[temp]))
real_low, real_high = real[0.5], real[2.0]
low_words = samples[0.5].split()[:-1]
n_low, n_distinct = len(low_words), len({w.lower() for w in low_words})
varied = n_low >= 8 and n_distinct >= 0.6 * n_low  # not one word over and over
reads_like = varied and real_low >= 0.6  # most words at a low temperature are the corpus's own
nonsense_high = reads_like and real_high < real_low - 0.2  # high: invented words
(top_low, ent_low), (top_high, ent_high) = spread[0.5], spread[2.0]
print(
    table(
        WORDS["spread"],
        [(temp, f"{top:.2f}", f"{h:.2f}") for temp, (top, h) in spread.items()],
    )
)

# %% step heads
probe = data.val[:BLOCK]  # characters the model never trained on
with torch.no_grad():
    _, _, attn = model(probe[None], need_weights=True)  # per layer: (1, H, T, T)
w_all = torch.stack([a[0] for a in attn]).numpy()  # (L, H, T, T)
chars = ["␣" if c == " " else "⏎" if c == "\n" else c for c in tok.decode(probe)]
found = {}  # per pattern: (layer, head, its share, the share of even attention)
for pattern in PATTERNS:
    share, chance = shares(w_all, chars, pattern)  # (L, H) and one number
    if np.isnan(chance):  # the probe has no query this pattern applies to
        continue
    layer, head = (int(i) for i in np.unravel_index(np.nanargmax(share), share.shape))
    found[pattern] = (layer, head, float(share[layer, head]), chance)
print(
    table(
        WORDS["heads"],
        [
            (WORDS["patterns"][p], f"({la}, {h})", f"{s:.2f}", f"{c:.2f}", f"{s / c:.1f}x")
            for p, (la, h, s, c) in found.items()
        ],
    )
)
layer, head, prev_best, prev_chance = found["previous"]
above = {p: s >= LIFT * c for p, (_, _, s, c) in found.items()}  # LIFT times chance or more
clear = {p: above[p] and found[p][2] >= MIN_SHARE for p in found}  # and MIN_SHARE: a pattern
any_clear = any(clear.values())  # some head passes the explorer's test
prev_clear = above["previous"]  # the best previous-character head, clearly above chance
prev_ratio = prev_best / prev_chance
w_head = w_all[layer, head]
print(WORDS["pairs"].format(layer, head))
print(" ".join(f"{chars[t]}<{chars[w_head[t].argmax()]}" for t in range(1, 16)))
plot(
    "lesson6_7_head",
    heat(
        w_head[:24, :24],
        chars[:24],
        chars[:24],
        title=f"{LABELS[8]} {layer} · {LABELS[9]} {head}",
        ylabel=LABELS[2],
        xlabel=LABELS[3],
    ),
)

# %% step rnn_table
SIZES = (("rnn", 256), ("lstm", 128), ("gru", 148))  # about as many parameters as the GPT


def make(kind, seed):  # one model of the table, from its own seed
    torch.manual_seed(seed)
    if kind == "gpt":
        return GPT(cfg)
    n = dict(SIZES)[kind]
    return CharRNN(RNNConfig(kind, vocab, n_embd=32, n_hidden=n, n_layer=1, block_size=BLOCK))


seeds = range(SEED, SEED + SEEDS) if FULL else range(shipped["seeds"])  # shipped: 0, 1
runs = {}  # per (model, seed): the model, trained here or shipped
for kind in ["gpt", *dict(SIZES)]:
    for seed in seeds:
        if FULL and (kind, seed) == ("gpt", SEED):
            runs[kind, seed] = model  # the GPT trained above is seed SEED's
        elif FULL:  # the same steps and schedule; per seed, the same batches
            runs[kind, seed] = make(kind, seed)
            Trainer(replace(train, seed=seed), None, progress=False).fit(runs[kind, seed], task)
        else:
            runs[kind, seed] = make(kind, seed)
            state = shipped[f"{kind}/{seed}"]
            runs[kind, seed].load_state_dict({k: v.float() for k, v in state.items()})
val = {}  # per model: the validation perplexity of each seed, measured here
for (kind, _), m in runs.items():
    val.setdefault(kind, []).append(math.exp(val_loss(m)))
params = {kind: runs[kind, SEED].num_params() for kind in val}
ppls = {kind: float(np.mean(v)) for kind, v in val.items()}  # the mean over the seeds
spreads = {kind: max(v) - min(v) for kind, v in val.items()}  # best minus worst seed
print(
    table(
        [*WORDS["table"][:2], *[WORDS["table"][2].format(s) for s in seeds], *WORDS["table"][3:]],
        [
            (
                NAMES[k],
                f"{params[k]:,}",
                *[f"{x:.2f}" for x in v],
                f"{ppls[k]:.2f}",
                f"{spreads[k]:.2f}",
            )
            for k, v in val.items()
        ],
    )
)
best = min(ppls, key=ppls.get)
runner_up = min((k for k in ppls if k != best), key=ppls.get)
margin = ppls[runner_up] - ppls[best]
best_name, runner_name, n_seeds = NAMES[best], NAMES[runner_up], len(seeds)
learned_any = ppls[best] < ppl_unigram  # below the best perplexity without context
ranked = learned_any and SEEDS > 1 and margin > max(spreads.values())  # beyond the seeds
rnns = {kind: runs[kind, SEED] for kind in dict(SIZES)}
plot("lesson6_8_table", bars({"ppl": list(ppls.values())}, [NAMES[k] for k in ppls]))
xv, yv = data.batch("val", 8, BLOCK, torch.Generator().manual_seed(SEED))
reach = {}
for kind, rnn in rnns.items():  # backpropagation through time, measured
    emb = rnn.emb(xv).detach().requires_grad_()  # (B, T, n_embd): one input per time step
    h, _ = rnn.rnn(emb)  # (B, T, n_hidden)
    F.cross_entropy(rnn.head(h[:, -1]), yv[:, -1]).backward()  # the last prediction's loss only
    g = emb.grad.norm(dim=(0, 2))  # (T,): how much of its gradient reached each time step
    reach[kind] = (g[-33] / g[-1]).item()  # 32 steps back, relative to the last step
print(WORDS["reach"].format(", ".join(f"{NAMES[k]} {v:.1e}" for k, v in reach.items())))

# %% step recap


# %% exercise ppl_from_losses answer=ppl_ex
losses_ex = np.array([2.1, 0.4, 1.3, 3.0, 0.9])  # one loss per predicted character (nats)
ppl_ex = losses_ex.mean()  # TODO: this is the mean loss, not the perplexity

# %% solution ppl_from_losses
losses_ex = np.array([2.1, 0.4, 1.3, 3.0, 0.9])  # one loss per predicted character (nats)
ppl_ex = np.exp(losses_ex.mean())  # e to the mean loss

# %% mistake ppl_from_losses mean_of_exp
losses_ex = np.array([2.1, 0.4, 1.3, 3.0, 0.9])
ppl_ex = np.exp(losses_ex).mean()

# %% exercise sharpen answer=probs_ex
scores_ex = torch.tensor([2.0, 1.0, 0.5, -1.0])  # the model's scores for four characters
probs_ex = torch.softmax(scores_ex, -1)  # TODO: the probabilities at temperature 0.5

# %% solution sharpen
scores_ex = torch.tensor([2.0, 1.0, 0.5, -1.0])  # the model's scores for four characters
probs_ex = torch.softmax(scores_ex / 0.5, -1)  # a low temperature divides by less than 1: sharper
print(probs_ex)

# %% mistake sharpen multiplied
scores_ex = torch.tensor([2.0, 1.0, 0.5, -1.0])
probs_ex = torch.softmax(scores_ex * 0.5, -1)
