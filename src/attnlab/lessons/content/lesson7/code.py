# Lesson 7: seq2seq with attention, trained live on dates.
# The prose of each step is in en.md, ja.md and zh.md beside this file.

# %% setup
from importlib.resources import files

import numpy as np
import torch

from attnlab.data.dates import EOS, FORMATS, SOS, DateSplits, examples
from attnlab.lessons import check_answer, quiz
from attnlab.lessons.show import bars, heat, pad, plot, table
from attnlab.models import Seq2Seq, Seq2SeqConfig, sequence_loss
from attnlab.train import SRC, TGT, DateTask, TrainConfig, Trainer, encode_batch, translate

SEED = 0
LANG = "en"
STEPS = 60  # training steps of each model trained live here: a short curve to watch
SHIPPED_STEPS = 800  # the steps the shipped models trained for, by this same code
FULL = STEPS >= SHIPPED_STEPS or SEED != 0  # True: study models trained live, not shipped ones
N_TEST = 2000  # unseen dates each model is scored on (fewer: a quicker run)
KINDS = ["none", "bahdanau", "luong-general"]
NAMES = {"none": "no attention", "bahdanau": "Bahdanau", "luong-general": "Luong"}  # in tables
torch.set_num_threads(1)  # one thread, a fixed seed and a step count: the same numbers anywhere

# %% step seq2seq_model
splits = DateSplits.make(SEED)  # dates split before any text is made
pairs = examples(splits.train[:5], SEED)  # data: five dates, written and in ISO form
for source_text, target in pairs:
    print(f"{pad(repr(source_text), 32)} -> {target!r}")  # pad: a CJK character is 2 wide
torch.manual_seed(SEED)
model = Seq2Seq(Seq2SeqConfig(len(SRC), len(TGT), attention="bahdanau"))
src, src_len, tgt_in, tgt_out = encode_batch(pairs)
states, s = model.encode(src, src_len)  # (B, S, 2H) encoder states, (B, 2H) first decoder state
y = torch.full((len(pairs),), TGT.index[SOS])  # every answer starts with <sos>
step_logits, s1, _, w1 = model.step(y, s, torch.zeros_like(s), states, src_len, s)
width = s.shape[-1]  # the one vector a decoder without attention gets
print(f"encoder states {tuple(states.shape)}, decoder state {tuple(s.shape)}")
print(f"one decoder step: logits {tuple(step_logits.shape)}, weights {tuple(w1.shape)}")
print(f"weights of example 0 sum to {round(w1[0].sum().item(), 6)}")

# %% step teacher_forcing
print("decoder input :", [TGT.chars[i] if i > 2 else "<sos>" for i in tgt_in[0].tolist()])
print("target output :", [TGT.chars[i] if i > 2 else "<eos>" for i in tgt_out[0].tolist()])
with torch.no_grad():
    logits, _ = model(src, src_len, tgt_in)  # (B, 11, V): every step in one call
    loss0 = sequence_loss(logits, tgt_out).item()
print(f"untrained loss {loss0:.3f}; ln({len(TGT) - 1}) = {np.log(len(TGT) - 1):.3f}")

# %% step train_seq2seq
train = TrainConfig(
    max_iters=STEPS,  # a fixed number of steps, whatever the machine's speed
    batch_size=64,
    lr=3e-3,
    min_lr=3e-4,
    warmup_iters=50,
    weight_decay=0.0,
    eval_interval=10**9,
    eval_iters=1,
    log_interval=10**9,
    seed=SEED,
)
task = DateTask(splits, SEED, n_val=200)
live, results = {}, {}
for kind in KINDS:
    torch.manual_seed(SEED)
    live[kind] = Seq2Seq(Seq2SeqConfig(len(SRC), len(TGT), attention=kind))
    results[kind] = Trainer(train, None, progress=False).fit(live[kind], task)
    live[kind].eval()
print(
    table(
        ["attention", "parameters", "steps", "last train loss", "val loss"],
        [
            (
                NAMES[kind],
                f"{live[kind].num_params():,}",
                r.iters,
                f"{np.mean(r.train_losses[-20:]):.3f}",
                f"{r.evals[-1]['val_loss']:.3f}",
            )
            for kind, r in results.items()
        ],
    )
)
models = live  # the models the steps below study
if not FULL:  # the shipped models: trained by this code with STEPS = SHIPPED_STEPS
    path = files("attnlab.lessons") / "content" / "lesson7" / "weights.pt"
    with path.open("rb") as f:
        shipped = torch.load(f, weights_only=True)  # tensors only: no code runs on loading
    models = {}
    for kind in KINDS:
        models[kind] = Seq2Seq(Seq2SeqConfig(len(SRC), len(TGT), attention=kind))
        models[kind].load_state_dict({k: v.float() for k, v in shipped[kind].items()})
        models[kind].eval()
val_batch = encode_batch(task.val)  # the same validation dates for every model
with torch.no_grad():  # recomputed here, from the weights studied below
    studied = {kind: task.loss(m, val_batch).item() for kind, m in models.items()}
studied_steps = STEPS if FULL else SHIPPED_STEPS
if FULL:
    print(f"studied below: trained here, {studied_steps} steps each")
else:
    print(f"studied below: shipped, {studied_steps} steps each")
print(table(["attention", "val loss"], [(NAMES[k], f"{v:.3f}") for k, v in studied.items()]))

# %% step compare_attention
test = examples(splits.test[:N_TEST], SEED + 2)  # data: dates no model has seen


def right(model, pairs):  # (N,) bool: is each date written exactly right?
    src, src_len, _, _ = encode_batch(pairs)
    with torch.no_grad():
        out, _ = model.greedy(src, src_len, TGT.index[SOS], 11)  # (N, 11) characters
    return np.array([TGT.decode(o) == y for o, (_, y) in zip(out.tolist(), pairs, strict=True)])


correct = {kind: right(models[kind], test) for kind in KINDS}
n_test = len(test)
exact = {kind: c.mean() for kind, c in correct.items()}
print(table(["attention", "exact match"], [(NAMES[kind], f"{e:.1%}") for kind, e in exact.items()]))
for source_text, target in test[:4]:
    answers = {kind: translate(models[kind], source_text).text for kind in KINDS}
    print(f"{pad(repr(source_text), 32)} {target}  " + "  ".join(answers.values()))
with_attention = min(exact[kind] for kind in KINDS[1:])  # the weaker of the two
gap = with_attention - exact["none"]
learned = with_attention >= 0.95  # both write at least 95% of unseen dates exactly right
beats = learned and gap >= 0.05  # and both are clearly ahead of the model without
said = {True: "yes", False: "no"}
print(f"learned: {said[bool(learned)]}; attention ahead of none by {gap:.1%}: {said[bool(beats)]}")

# %% step bottleneck
BUCKETS = [(0, 12), (13, 19), (20, 24), (25, 99)]  # input lengths in characters
names = [f"{lo}-{hi}" if hi < 99 else f"{lo}+" for lo, hi in BUCKETS]
length = np.array([len(source_text) for source_text, _ in test])
groups = [(lo <= length) & (length <= hi) for lo, hi in BUCKETS]  # (N,) masks
sizes = [int(g.sum()) for g in groups]
by_length = {kind: [c[g].mean() for g in groups] for kind, c in correct.items()}
longest = {kind: acc[-1] for kind, acc in by_length.items()}
spread = {kind: max(acc) - min(acc) for kind, acc in by_length.items()}  # best minus worst
longest_name, n_longest = names[-1], sizes[-1]
print(
    table(
        ["attention", *[f"{n} ({k})" for n, k in zip(names, sizes, strict=True)]],
        [(NAMES[kind], *[f"{a:.1%}" for a in acc]) for kind, acc in by_length.items()],
    )
)
named = {NAMES[kind]: acc for kind, acc in by_length.items()}
title = "exact match on unseen dates, by input length"
plot("lesson7_5_by_length", bars(named, names, title=title, ylabel="exact match"))
FORMS = ["d month yyyy", "weekday, month d, yyyy"]  # the same dates, written short and long
same = splits.test[: N_TEST // 4]
n_same = len(same)
written = {  # data: each date in both forms
    form: [(FORMATS[form](d), d.isoformat()) for d in same] for form in FORMS
}
len_short, len_long = (np.mean([len(x) for x, _ in written[form]]) for form in FORMS)
short_long = {kind: [right(models[kind], written[form]).mean() for form in FORMS] for kind in KINDS}
print(f"the same {n_same} dates, {written[FORMS[0]][0][0]!r} vs {written[FORMS[1]][0][0]!r}:")
print(
    table(
        ["attention", "short", "long"],
        [(NAMES[k], *[f"{a:.1%}" for a in v]) for k, v in short_long.items()],
    )
)
drop = {kind: short - long for kind, (short, long) in short_long.items()}  # lost to length
falls = learned and drop["none"] >= 0.05 and drop["none"] >= 2 * max(drop[k] for k in KINDS[1:])
drops = ", ".join(f"{NAMES[k]} {d:.1%}" for k, d in drop.items())
print(f"short minus long: {drops}; bottleneck: {said[bool(falls)]}")

# %% step alignment
PROBES = ["Saturday 9 May 2018", "2018年5月9日", "2018/05/09", "the 9th of May 2018"]
on_year = {kind: {} for kind in KINDS[1:]}  # the year's weight while writing the year
on_end = {kind: {} for kind in KINDS[1:]}  # the weight on the last four characters instead
alignments = {}
for kind in KINDS[1:]:  # the two models with attention
    for probe in PROBES:
        t = translate(models[kind], probe)
        w = t.weights.numpy()  # (output characters, input characters)
        year = [probe.index("2018") + i for i in range(4)]  # where the year sits in the input
        on_year[kind][probe] = float(w[:4, year].sum(1).mean())
        on_end[kind][probe] = float(w[:4, -4:].sum(1).mean())
        alignments[kind, probe] = t.text, w  # data: what the model wrote, and its weights
        print(f"{NAMES[kind]}: {probe!r} -> {t.text!r}")
        print("  each output character < the input it weighs most:")
        weighed = [probe[w[i].argmax()].replace(" ", "␣") for i in range(len(t.text))]
        print("  " + "  ".join(f"{c}<{x}" for c, x in zip(t.text, weighed, strict=True)))
    print(f"  weight on the year while writing it: {[round(v, 2) for v in on_year[kind].values()]}")
    for probe in PROBES[:2]:  # the year last, then the year first
        out, w = alignments[kind, probe]
        plot(
            f"lesson7_6_alignment_{kind}_{PROBES.index(probe)}",
            heat(w, list(out), list(probe), title=NAMES[kind], xlabel="input", ylabel="output"),
        )
year_min = {kind: min(v.values()) for kind, v in on_year.items()}  # the worst probe
year_first = PROBES[1]
chance = {probe: 4 / len(probe) for probe in PROBES}  # evenly spread over the input
chance_first = chance[year_first]
aligned = all(year_min[kind] >= 0.5 for kind in KINDS[1:])  # on the year, wherever it stands
smallest = ", ".join(f"{NAMES[k]} {v:.0%}" for k, v in year_min.items())
print(f"smallest weight on the year: {smallest}; aligned: {said[bool(aligned)]}")


# %% step recap


# %% exercise teacher_forcing_input answer=decoder_input
target_ex = TGT.encode(SOS + "2018-05-09" + EOS)  # the answer, with <sos> and <eos>
decoder_input = target_ex  # TODO: what the decoder reads at each step under teacher forcing

# %% solution teacher_forcing_input
target_ex = TGT.encode(SOS + "2018-05-09" + EOS)  # the answer, with <sos> and <eos>
decoder_input = target_ex[:-1]  # <sos> and the true characters, never its own guesses
print([TGT.chars[i] for i in decoder_input[1:]])

# %% mistake teacher_forcing_input shifted
target_ex = TGT.encode(SOS + "2018-05-09" + EOS)
decoder_input = target_ex[1:]

# %% exercise additive_score answer=weights_ex
gen = torch.Generator().manual_seed(SEED)
s_ex = torch.randn(4, generator=gen)  # (H,) the decoder state that asks
h_ex = torch.randn(6, 4, generator=gen)  # (S, H) six encoder states
W_s, W_h = (m + m.T for m in torch.randn(2, 4, 4, generator=gen))  # symmetric: s @ W_s = W_s s
v_ex = torch.randn(4, generator=gen)  # (H,) reads one score out of each mixed vector
scores_ex = h_ex @ s_ex  # TODO: Bahdanau's additive score v · tanh(W_s s + W_h h_i)
weights_ex = torch.softmax(scores_ex, dim=0)  # (S,) one weight per input position

# %% solution additive_score
gen = torch.Generator().manual_seed(SEED)
s_ex = torch.randn(4, generator=gen)  # (H,) the decoder state that asks
h_ex = torch.randn(6, 4, generator=gen)  # (S, H) six encoder states
W_s, W_h = (m + m.T for m in torch.randn(2, 4, 4, generator=gen))  # symmetric: s @ W_s = W_s s
v_ex = torch.randn(4, generator=gen)  # (H,) reads one score out of each mixed vector
scores_ex = torch.tanh(s_ex @ W_s + h_ex @ W_h) @ v_ex  # (S,): the state is added to each h_i
weights_ex = torch.softmax(scores_ex, dim=0)  # (S,) one weight per input position
top_ex = int(weights_ex.argmax())
print("weights", [round(w, 3) for w in weights_ex.tolist()])

# %% mistake additive_score no_tanh
gen = torch.Generator().manual_seed(SEED)
s_ex = torch.randn(4, generator=gen)
h_ex = torch.randn(6, 4, generator=gen)
W_s, W_h = (m + m.T for m in torch.randn(2, 4, 4, generator=gen))  # symmetric: s @ W_s = W_s s
v_ex = torch.randn(4, generator=gen)
scores_ex = (s_ex @ W_s + h_ex @ W_h) @ v_ex
weights_ex = torch.softmax(scores_ex, dim=0)
