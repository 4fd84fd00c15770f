"""``attnlab check``: every NumPy reference function against PyTorch."""

from __future__ import annotations

import json
import shutil

NAME = "check"


def add_parser(sub) -> None:
    p = sub.add_parser(
        NAME,
        help="verify every NumPy reference function against PyTorch",
        description="Run every attnlab.ref function (and the torch weights path) against PyTorch "
        "on random inputs and print max |difference| per case. float64 must agree to 1e-10; "
        "float32 may err at most 2x as much as PyTorch's own float32 result. Exit 1 on any "
        "mismatch.",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for the random inputs (default 0)")
    p.add_argument(
        "--dtype",
        dest="dtypes",
        action="append",
        choices=["float64", "float32"],
        help="precision to check; repeat for several (default: both)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report instead of a table")
    p.set_defaults(run=run)


def run(a) -> int:
    import numpy as np

    from .. import selfcheck
    from ..tables import fit

    dtypes = tuple(a.dtypes or ("float64", "float32"))
    rows = selfcheck.run_all(a.seed, tuple(np.dtype(d).type for d in dtypes))
    failed = [r for r in rows if not r.parity.ok]
    if a.json:
        print(json.dumps({"ok": not failed, "rows": selfcheck.to_json(rows)}, indent=2))
    else:
        width = shutil.get_terminal_size().columns  # 80 when not a terminal
        print(selfcheck.format_table(rows, width))
        print(f"\n{len(rows) - len(failed)} passed, {len(failed)} failed")
        for r in failed:
            print(fit(f"FAIL {r.function} [{r.case}, {r.dtype}]: {r.parity.message}", width))
    return 1 if failed else 0
