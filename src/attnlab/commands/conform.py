"""``attnlab conform TARGET``: the conformance kit on any attention function."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from ._args import check_outputs

NAME = "conform"


def add_parser(sub) -> None:
    from ._args import nonneg_int

    p = sub.add_parser(
        NAME,
        help="hold an attention function to torch's SDPA, feature by feature",
        description="Run the conformance kit on TARGET, a function with torch's SDPA signature "
        "fn(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, "
        "enable_gqa=False) on (B, H, T, D) inputs. One row per feature (masks, causal "
        "alignment, GQA, dtypes, gradients...): pass, fail or unsupported, the worst error "
        "against the budget (2x torch's own error at that dtype against a float64 reference, "
        "plus 4 ulps), and for a failure the smallest failing case and where it differs. "
        "A target declares that it does not support a feature by raising TypeError or "
        "NotImplementedError (or a RuntimeError saying 'No available kernel', as torch's "
        "backends do) before returning any output for that feature's inputs: the row is then "
        "'unsupported' with the exception's message, not a failure. A row whose failing cases "
        "all need a row that fails on its own says 'see ROW'; a failure names the convention "
        "the output follows instead of torch's when one matches (bottom-right causal, GQA heads "
        "tiled, mean(V) on fully masked rows, ...). Opt-in rows (bottom_right_causal, "
        "sliding_window, softcap, alibi, kv_cache, key_lengths) run when TARGET's signature "
        "names their keyword (causal_alignment, window_size, softcap, alibi_slopes, "
        "cache_seqlens, key_lengths). "
        "Exit 0 when every supported feature passes, 1 when any fails, 2 when TARGET cannot "
        "be loaded or --save-failing's folder cannot be written.",
    )
    p.add_argument(
        "target", metavar="TARGET", help="path/to/file.py:function or package.module:function"
    )
    p.add_argument(
        "--api",
        choices=["torch", "numpy"],
        default="torch",
        help="what q, k, v are: torch tensors (default) or NumPy arrays",
    )
    p.add_argument(
        "--format", choices=["text", "json"], default="text", help="report format (default text)"
    )
    p.add_argument(
        "--seed", type=nonneg_int, default=0, help="seed for the random inputs (default 0)"
    )
    p.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="where the inputs live (the reference stays float64 on the CPU)",
    )
    p.add_argument(
        "--features",
        metavar="IDS",
        help="comma-separated feature ids to run (default: every default row and the opt-in "
        "rows TARGET declares), e.g. causal,gqa,float16",
    )
    p.add_argument(
        "-o",
        "--output",
        "--out",
        dest="output",
        metavar="FILE",
        help="write the report to FILE instead of printing it",
    )
    p.add_argument(
        "--save-failing",
        metavar="DIR",
        help="write each failing row's smallest case to DIR/<row>/: case.npz (inputs, expected, "
        "got, budget; np.load with allow_pickle=False) and repro.py, which reruns it on TARGET",
    )
    p.set_defaults(run=run)


def run(a) -> int:
    check_outputs((a.output, "-o", "file"), (a.save_failing, "--save-failing", "folder"))
    from ..conform import check_attention, load_target
    from ..conform.run import check_device, feature_ids
    from ..conform.save import save_failing
    from ..files import atomic_write_text

    features = (
        None if a.features is None else [f.strip() for f in a.features.split(",") if f.strip()]
    )
    feature_ids(features)  # before loading: a misspelt feature is one line, not a run
    check_device(a.device, a.api)  # and so is a missing GPU
    fn = load_target(a.target)
    report = check_attention(
        fn, api=a.api, seed=a.seed, device=a.device, features=features, target=a.target
    )
    if a.output:
        text = report.to_json() if a.format == "json" else report.text()
        atomic_write_text(a.output, text + "\n")
        print(f"{report.summary()}; report written to {a.output}")
    else:  # the terminal's width (80 columns when it is not a terminal)
        width = shutil.get_terminal_size().columns
        print(report.to_json() if a.format == "json" else report.text(width))
    if a.save_failing is not None:
        for d in save_failing(report, Path(a.save_failing), a.target):
            print(f"saved {d.name}'s failing case: python {d / 'repro.py'}", file=sys.stderr)
    return 0 if report.passed else 1
