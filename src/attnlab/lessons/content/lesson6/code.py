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
print(f"block(x).shape = {tuple(block(x).shape)}  parameters: {n_block}")
print(f"after LayerNorm: |mean| <= {ln_mean:.1e}, std = {ln_std:.3f}")
print(f"our block vs attnlab's GPT block: max difference {same_as_gpt:.1e}")
print(
    f"gradient at the input of 12 blocks: with residuals {grad_res:.2e}, without {grad_plain:.2e}"
)

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
moved_enc, moved_dec = moved["encoder"], moved["decoder"]
print(
    table(
        ["", "mask", "positions changed"],
        [
            ("encoder (BERT)", "all True", f"{moved_enc} / {T}"),
            ("decoder (GPT)", "lower triangle", f"{moved_dec} / {T}"),
        ],
    )
)
SENTENCE = "the cat sat on the mat"  # data: the lesson's example sentence
hidden_at = [4, 19]  # BERT's objective: hide a few tokens, predict them from both sides
bert_input = "".join("_" if i in hidden_at else c for i, c in enumerate(SENTENCE))
bert_targets = {i: SENTENCE[i] for i in hidden_at}
# GPT's objective: the next token, at every position
gpt_targets = [(SENTENCE[i], SENTENCE[i + 1]) for i in range(len(SENTENCE) - 1)]
bert_fill = ", ".join(repr(c) for c in bert_targets.values())
n_next, n_sentence = len(gpt_targets), len(SENTENCE)
print(f"BERT reads {bert_input!r} and must fill {bert_targets}")
print(f"GPT on {SENTENCE!r}: the next character at each of {n_next} positions:")
print("  " + "  ".join(f"{a}>{b}" for a, b in gpt_targets[:8]) + "  ...")
plot(
    "lesson6_2_encoder",
    heat(weights["encoder"], title="encoder (BERT): sees both sides", ylabel="query", xlabel="key"),
)
plot(
    "lesson6_2_decoder",
    heat(
        weights["decoder"], title="decoder (GPT): sees only the past", ylabel="query", xlabel="key"
    ),
)

# %% step language_model
text = load_corpus()  # the built-in corpus: Python's reference manual, shipped with Python
tok = CharTokenizer.from_text(text)
data = TokenData.from_text(text, tok)  # 90% to train on, 10% to validate
BLOCK = 64  # characters of context
xb, yb = data.batch("train", 1, 12, torch.Generator().manual_seed(SEED))
x_text, y_text = tok.decode(xb[0]), tok.decode(yb[0])  # data: twelve characters of the corpus
print("x:", repr(x_text))
print("y:", repr(y_text), "(x shifted by one: the next character at each position)")
cfg = GPTConfig(vocab_size=tok.vocab_size, block_size=BLOCK, n_layer=2, n_head=4, n_embd=64)
torch.manual_seed(SEED)
model = GPT(cfg)
with torch.no_grad():
    loss0 = model(*data.batch("val", 16, BLOCK, torch.Generator().manual_seed(SEED)))[1].item()
vocab, n_chars, n_params = tok.vocab_size, len(text), model.num_params()
log_vocab = math.log(vocab)
print(f"{n_chars:,} characters, vocabulary {vocab}, GPT with {n_params:,} parameters")
print(f"untrained loss {loss0:.3f}; ln(vocabulary) = {log_vocab:.3f}")

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
        ["step", "train loss", "val loss", "val perplexity"],
        [
            (e["iter"], f"{e['train_loss']:.3f}", f"{e['val_loss']:.3f}", f"{e['val_ppl']:.2f}")
            for e in evals
        ],
    )
)
steps_at = np.arange(len(smooth)) + len(losses) - len(smooth)  # the step each point ends at
val_curve = ([e["iter"] for e in evals], [e["val_loss"] for e in evals])
curves = {"train (smoothed)": (steps_at, smooth), "validation": val_curve}
plot("lesson6_4_loss", curve(curves, xlabel="training step", ylabel="loss (nats)"))
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
if FULL:
    print(f"studied below: this GPT, {studied_steps} steps")
else:
    print(f"studied below: the shipped GPT, {studied_steps} steps")
print(f"its validation loss, measured here: {studied:.3f}")

# %% step perplexity
counts = torch.bincount(data.train, minlength=vocab).double()
p = counts / counts.sum()  # how often each character occurs
unigram = -(p[p > 0] * p[p > 0].log()).sum().item()  # the best loss without any context
ppl_uniform, ppl_unigram = vocab, math.exp(unigram)
ppl_start, ppl_final = math.exp(loss0), math.exp(studied)
rows = [
    ("uniform guess", ppl_uniform),
    ("character frequencies", ppl_unigram),
    ("untrained GPT", ppl_start),
    ("studied GPT", ppl_final),
]
print(table(["model", "perplexity"], [(name, f"{v:.2f}") for name, v in rows]))
uses_context = ppl_final < ppl_unigram  # below the best a model without context can do

# %% step temperature
model.eval()
PROMPT = "The "  # data: the text every sample starts from
ids = torch.tensor([tok.encode(PROMPT)])
with torch.no_grad():
    logits = model(ids)[0][0, -1]  # (vocab,): the scores for the character after the prompt
spread = {}
for temp in (0.5, 1.0, 2.0):
    probs = torch.softmax(logits / temp, -1)
    spread[temp] = (probs.max().item(), -(probs * probs.log()).sum().item())
samples = {}
for temp in (0.0, 0.5, 1.0, 2.0):  # 0: always the most likely character
    g = torch.Generator().manual_seed(SEED)
    new = torch.cat(list(model.generate(ids, 64, temperature=temp, generator=g)))
    samples[temp] = PROMPT + tok.decode(new.tolist())  # data: what the model wrote
known = set(text.split())  # every word of the training text
real = {}  # the share of a sample's words that occur in the training text
for temp, s in samples.items():
    words = s.split()[:-1]  # the last word may be cut off
    real[temp] = sum(w in known for w in words) / max(1, len(words))
    print(f"T = {temp} ({real[temp]:.0%} real words):")
    print(f"  {s!r}")
real_low, real_high = real[0.5], real[2.0]
low_words = samples[0.5].split()[:-1]
n_low, n_distinct = len(low_words), len({w.lower() for w in low_words})
varied = n_low >= 8 and n_distinct >= 0.6 * n_low  # not one word over and over
reads_like = varied and real_low >= 0.6  # most words at a low temperature are the corpus's own
nonsense_high = reads_like and real_high < real_low - 0.2  # high: invented words
(top_low, ent_low), (top_high, ent_high) = spread[0.5], spread[2.0]
print(
    table(
        ["T", "top probability", "entropy (nats)"],
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
named = {  # each pattern's name in the table
    "previous": "previous character",
    "first": "first character",
    "space": "spaces before",
    "line_start": "line start",
}
print(
    table(
        ["pattern", "best (layer, head)", "its weight", "even attention", "ratio"],
        [
            (named[p], f"({la}, {h})", f"{s:.2f}", f"{c:.2f}", f"{s / c:.1f}x")
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
print(f"layer {layer}, head {head}: each character and the one it attends to most")
print(" ".join(f"{chars[t]}<{chars[w_head[t].argmax()]}" for t in range(1, 16)))
plot(
    "lesson6_7_head",
    heat(
        w_head[:24, :24],
        chars[:24],
        chars[:24],
        title=f"layer {layer} · head {head}",
        ylabel="query",
        xlabel="key",
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
spreads = {kind: max(v) - min(v) for kind, v in val.items()}  # worst minus best seed
print(
    table(
        ["model", "parameters", *[f"seed {s}" for s in seeds], "mean", "spread"],
        [
            (
                k.upper(),
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
best_name, runner_name, n_seeds = best.upper(), runner_up.upper(), len(seeds)
learned_any = ppls[best] < ppl_unigram  # below the best perplexity without context
ranked = learned_any and SEEDS > 1 and margin > max(spreads.values())  # beyond the seeds
rnns = {kind: runs[kind, SEED] for kind in dict(SIZES)}
plot("lesson6_8_table", bars({"perplexity": list(ppls.values())}, [k.upper() for k in ppls]))
xv, yv = data.batch("val", 8, BLOCK, torch.Generator().manual_seed(SEED))
reach = {}
for kind, rnn in rnns.items():  # backpropagation through time, measured
    emb = rnn.emb(xv).detach().requires_grad_()  # (B, T, n_embd): one input per time step
    h, _ = rnn.rnn(emb)  # (B, T, n_hidden)
    F.cross_entropy(rnn.head(h[:, -1]), yv[:, -1]).backward()  # the last prediction's loss only
    g = emb.grad.norm(dim=(0, 2))  # (T,): how much of its gradient reached each time step
    reach[kind] = (g[-33] / g[-1]).item()  # 32 steps back, relative to the last step
reached = ", ".join(f"{k.upper()} {v:.1e}" for k, v in reach.items())
print(f"gradient 32 steps back / at the last: {reached}")

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
