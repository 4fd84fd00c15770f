#!/usr/bin/env bash
# Mutation testing of one module against one test file (mutmut; not part of `make test`).
#
#   tools/mutation.sh MODULE TESTS [PYTEST ARGS...]
#   tools/mutation.sh src/attnlab/viz/heatmap.py tests/viz/test_viz.py
#   tools/mutation.sh src/attnlab/ref/softmax.py tests/ref/test_softmax.py -k "not slow"
#
# mutmut plants one small change at a time in MODULE (a flipped comparison, a changed
# constant, a dropped argument...) and runs the tests of TESTS that reach the changed function;
# a mutant the tests let pass "survives". The run happens in a scratch copy of the checkout
# (build/mutation/<module>/), so the working tree is never touched. At the end it prints the
# score (killed / all mutants judged) and writes the survivors with their diffs to
# build/mutation/<module>/survivors.txt. Needs `pip install -e '.[mutation]'` (mutmut).
# Slow on a small machine: restrict each run to one module and the test file that covers it,
# and, for a large module, to some of its functions: MUTANTS='GLOB...' (mutmut's mutant names,
# e.g. MUTANTS='attnlab.ref.tiled.x__exact_block* attnlab.ref.tiled.x__finish_block*'); the
# score then counts the mutants of those functions only.
set -euo pipefail

if [[ $# -lt 2 ]]; then
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
module=$1
tests=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
[[ -x $python ]] || python=$(command -v python3)
[[ -f $root/$module ]] || { echo "mutation.sh: $module: no such file (a path under src/)" >&2; exit 2; }
[[ -e $root/$tests ]] || { echo "mutation.sh: $tests: no such test file" >&2; exit 2; }
"$python" -c "import mutmut" 2>/dev/null || {
    echo "mutation.sh: mutmut is missing: pip install -e '.[mutation]'" >&2
    exit 2
}

name=$(basename "$module" .py)
work=$root/build/mutation/$(dirname "${module#src/}" | tr / _)_$name
rm -rf "$work"
mkdir -p "$work"
# the code and the tests, as they are now (uncommitted edits included)
cp -r "$root/src" "$root/tests" "$work/"
cp "$root/pyproject.toml" "$work/"
# mutmut reads setup.cfg when pyproject.toml has no [tool.mutmut]
{
    echo "[mutmut]"
    echo "source_paths = src"
    echo "only_mutate = $module"
    echo "pytest_add_cli_args_test_selection ="
    echo "    $tests"
    for arg in "$@"; do echo "    $arg"; done
    echo "pytest_add_cli_args ="
    echo "    -p"
    echo "    no:xdist"
    echo "    -p"
    echo "    no:cacheprovider"
} >"$work/setup.cfg"

cd "$work"
unset PYTHONPATH  # the scratch copy's mutants/src comes first, not the checkout's src
read -ra only <<<"${MUTANTS:-}"
"$python" -m mutmut run --max-children "${JOBS:-2}" "${only[@]}" >run.log 2>&1 || {
    tail -30 run.log >&2
    exit 1
}
"$python" -m mutmut results --all true >results.txt 2>&1 || true
"$python" - "$module" <<'EOF'
import os, sys
from collections import Counter

from mutmut.__main__ import find_mutant, get_diff_for_mutant

module = sys.argv[1]
rows = [line.strip().rsplit(":", 1) for line in open("results.txt") if ": " in line]
status = Counter(state.strip() for _, state in rows)
killed = status["killed"] + status["timeout"]
judged = killed + status["survived"] + status["no tests"]
score = 100 * killed / max(judged, 1)
print(f"{module}: {killed}/{judged} mutants killed ({score:.0f}%)", dict(status))
with open("survivors.txt", "w") as out:
    for name, state in rows:
        if state.strip() in ("survived", "no tests"):
            diff = get_diff_for_mutant(name, path=find_mutant(name).path)
            out.write(f"## {name}: {state.strip()}\n{diff}\n")
print(f"survivors and their diffs: {os.getcwd()}/survivors.txt")
EOF
