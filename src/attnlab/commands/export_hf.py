"""``attnlab export-hf RUN_DIR OUT``: an attnlab GPT run as a GPT-2 model folder."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ._args import check_outputs, examples

NAME = "export-hf"


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="write a GPT run as a Hugging Face GPT-2 model folder (same logits)",
        description="Write the GPT in RUN_DIR as a transformers GPT-2 folder: config.json, "
        "the weights (safetensors) and a tokenizer giving the run's character ids. "
        "GPT2LMHeadModel.from_pretrained(OUT) gives attnlab's logits. Learned or sinusoidal "
        "positions (rotary ones have no GPT-2 form); grouped-query heads are repeated. Needs "
        "pip install 'attnlab[hf]'.",
        epilog=examples(
            "attnlab export-hf runs/gpt hf/gpt",
            then="then, in Python: from transformers import pipeline; "
            "pipeline('text-generation', 'hf/gpt')('def ')",
        ),
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="a GPT run directory")
    p.add_argument("out", metavar="OUT", help="the folder to write (new, or empty)")
    p.add_argument("--force", action="store_true", help="write into OUT even if it holds files")
    p.set_defaults(run=run)


def run(a) -> int:
    check_outputs((a.out, "OUT", "folder"))
    from ..hf import export_gpt2
    from ..hf._need import transformers

    out = Path(a.out)
    if out.is_dir() and any(out.iterdir()) and not a.force:
        raise UserError(f"OUT {out}: not empty; pass --force to write into it")
    transformers()  # its absence said before any work
    export_gpt2(a.run_dir, out)
    print(f"wrote {out}: GPT2LMHeadModel.from_pretrained({str(out)!r}) gives the run's logits")
    return 0
