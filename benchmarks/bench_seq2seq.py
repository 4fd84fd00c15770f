"""The seq2seq goal: Bahdanau and Luong reach >= 99.5% exact match on 2,000 unseen test dates
within 3 minutes of training on 2 CPU cores; the no-attention baseline is reported beside them.

Every attention kind trains for the same wall-clock budget (default 60 s) on the same data;
accuracy is measured on dates never seen in training, overall and by input length.
Run: python benchmarks/bench_seq2seq.py [--budget-seconds 60]
"""

from __future__ import annotations

import argparse

from attnlab.train.seq2seq import compare_seq2seq, format_comparison


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget-seconds", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(f"training budget per model: {a.budget_seconds:g} s (goal: >= 99.5% within 180 s)")
    print(format_comparison(compare_seq2seq(a.budget_seconds, a.seed, progress=False)))


if __name__ == "__main__":
    main()
