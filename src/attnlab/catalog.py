"""Names that commands choose from, and the training presets: plain data, no heavy imports.

The models and the trainer take their registries' names from here, and so do the command-line
choices, so ``attnlab --help`` stays fast (no torch) and the two never drift apart.
"""

from __future__ import annotations

POSITIONS = ("learned", "sinusoidal", "rope")  # attnlab.models.GPT position encodings
ATTENTION_KINDS = ("none", "bahdanau", "luong-dot", "luong-general", "luong-concat")  # Seq2Seq
DEVICES = ("cpu", "cuda", "auto")

PRESETS: dict[str, dict[str, dict]] = {
    # about a minute on 2 CPU cores
    "tiny": {
        "model": {"block_size": 64, "n_layer": 3, "n_head": 4, "n_embd": 96, "dropout": 0.0},
        "train": {
            "max_iters": 1000,
            "batch_size": 16,
            "lr": 2e-3,
            "min_lr": 2e-4,
            "warmup_iters": 50,
            "eval_interval": 250,
            "eval_iters": 20,
        },
    },
    # nanoGPT's published CPU recipe for shakespeare_char (val loss about 1.88 after 2000 iters),
    # with rotary positions: 1.78 here (learned positions, nanoGPT's own architecture: 1.90)
    "nanogpt-cpu": {
        "model": {
            "block_size": 64,
            "n_layer": 4,
            "n_head": 4,
            "n_embd": 128,
            "dropout": 0.0,
            "bias": False,
            "pos": "rope",
        },
        "train": {
            "max_iters": 2000,
            "lr_decay_iters": 2000,
            "batch_size": 12,
            "lr": 1e-3,
            "min_lr": 1e-4,
            "warmup_iters": 100,
            "beta2": 0.99,
            "weight_decay": 0.1,
            "grad_clip": 1.0,
            "eval_interval": 250,
            "eval_iters": 20,
        },
    },
    # nanoGPT's GPU recipe (val loss about 1.47 on Tiny Shakespeare); use --device cuda
    "gpu": {
        "model": {"block_size": 256, "n_layer": 6, "n_head": 6, "n_embd": 384, "dropout": 0.2},
        "train": {
            "max_iters": 5000,
            "lr_decay_iters": 5000,
            "batch_size": 64,
            "lr": 1e-3,
            "min_lr": 1e-4,
            "warmup_iters": 100,
            "beta2": 0.99,
            "eval_interval": 250,
            "eval_iters": 200,
        },
    },
}

# A new seq2seq date run (attnlab train seq2seq): here, so --help can say it without torch.
SEQ2SEQ_MINUTES = 3.5  # SEQ2SEQ_TRAIN's run on 2 CPU cores, measured
SEQ2SEQ_TRAIN = {  # the training settings of a new date run
    "max_iters": 3000,
    "batch_size": 64,
    "lr": 3e-3,
    "min_lr": 3e-4,
    "warmup_iters": 50,
    "weight_decay": 0.0,
    "grad_clip": 1.0,
    "eval_interval": 500,
    "eval_iters": 1,
}
