"""Hostile files and folders a learner could hand in, each asserting what the grader and the
teacher see. (The sandbox's own walls are tested in test_isolation.py.)

Forged result streams: the submission writes the result pipe itself (its number is in
``sys.argv``; the harness's frame holds the spec) and exits. The parent must bound what it
reads from the exercise's own shapes, before allocating: every forgery is the learner's
``crash`` verdict, never GRADER ERROR, never a hang, never a large allocation.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from attnlab.files import atomic_write_text
from attnlab.grade import bwrap as bw
from attnlab.grade import grade_dir, grade_source, report, seccomp

CORPUS = Path(__file__).parent / "submissions"
RIGHT = (CORPUS / "self_attention__pass__vectorized.py").read_text()

FORGE = """
import json, os, sys
import numpy as np

def _spec():
    f = sys._getframe(1)
    while "spec" not in f.f_locals:
        f = f.f_back
    return f.f_locals["spec"]

def _send(head: bytes, data: bytes = b"", head_len=None, data_len=None):
    fd = int(sys.argv[2])
    n, d = len(head) if head_len is None else head_len, len(data) if data_len is None else data_len
    os.write(fd, n.to_bytes(8, "little") + d.to_bytes(8, "little") + head + data)
    os._exit(0)

def _status(cases, arrays=()):
    return json.dumps({"load_error": None, "cases": cases, "tampered": [], "attempts": [],
                       "arrays": list(arrays)}).encode()

def self_attention(X, W_Q, W_K, W_V, mask=False):
    spec = _spec()
    n = len(spec["cases"])
    ok = {"error": None, "kind": "tuple", "n": 2, "types": ["a", "b"]}
"""


def forged(body: str, **kw):
    """Grade a submission whose function forges the result stream with ``body``."""
    source = FORGE + textwrap.indent(textwrap.dedent(body), "    ")
    kw.setdefault("isolation", "process")
    kw.setdefault("timeout", 5)
    return grade_source(source, "self_attention", seed=3, **kw)


def _zip_bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("r0_0.npy", b"\0" * (64 << 20))
    return buf.getvalue()


def _max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


ATTACKS = {
    # a deflated .npz member that would inflate to 64 MiB: the old format, now not even read
    # (made here: the child may import no module its harness did not load, zipfile among them)
    "zip_bomb": """
        bomb = ZIP_BOMB
        os.write(int(sys.argv[2]), len(bomb).to_bytes(8, "little") + bomb)
        os._exit(0)
    """,
    "thirty_million_parts": """
        _send(_status([{**ok, "n": 30_000_000}] * n))
    """,
    "structured_dtype": """
        _send(_status([ok] * n, [["r0_0", "|V16", [1]]]), b"\\0" * 16)
    """,
    "object_dtype": """
        _send(_status([ok] * n, [["r0_0", "|O", [1]]]), b"\\0" * 8)
    """,
    "huge_declared_header": """
        _send(b"{}", head_len=1 << 40)
    """,
    "huge_declared_data": """
        _send(_status([ok] * n), data_len=1 << 40)
    """,
    "data_past_the_arrays": """
        _send(_status([ok] * n), b"\\0" * 4096)
    """,
    "unknown_array": """
        _send(_status([ok] * n, [["x9_9", "<f8", [1]]]), b"\\0" * 8)
    """,
    "deep_json": """
        _send(b"[" * 100_000 + b"]" * 100_000)
    """,
    "wrong_field_types": """
        _send(_status([{"error": 5, "kind": [], "n": "many", "types": 7}] * n))
    """,
    "fewer_cases": """
        _send(_status([ok]))
    """,
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_forged_result_stream_is_the_learners_crash(attack):
    body = ATTACKS[attack]  # the bomb made when its test runs (0.5 s), not when collected
    body = body.replace("ZIP_BOMB", repr(_zip_bomb())) if attack == "zip_bomb" else body
    before = _max_rss_mib()
    r = forged(body)
    assert r.error is None, r.error  # never GRADER ERROR
    assert r.mistakes == ["crash"] and not r.passed, (r.mistakes, report.text(r))
    assert not any(c.name == "finishes in time" for c in r.checks)  # no hang
    assert "malformed" in report.text(r) or "exit code" in report.text(r)
    assert _max_rss_mib() - before < 64  # nothing near the sizes the stream claimed


def test_a_huge_declared_answer_is_refused_unread_and_a_small_wrong_shape_is_judged():
    """An answer that claims a 2^20 x 2^20 weights matrix: no byte of it is read; the report
    names the shape. A wrong shape of ordinary size is still judged as a wrong shape."""
    r = forged(
        """
        arrays = [[f"r{i}_{j}", "<f8", [1 << 20, 1 << 20]] for i in range(n) for j in (0, 1)]
        _send(_status([ok] * n, arrays))
        """
    )
    assert r.error is None and r.mistakes == ["crash"], report.text(r)
    assert "(1048576, 1048576)" in report.text(r) and "far larger" in report.text(r)
    transposed = RIGHT + textwrap.dedent(
        """
        _right = self_attention
        def self_attention(*a, **k):
            out, w = _right(*a, **k)
            return out.T, w
        """
    )
    r = grade_source(transposed, "self_attention", seed=3, isolation="process")
    assert r.mistakes[0] == "wrong_return" and "has shape" in report.text(r)


def test_a_megabyte_exception_message_is_cut_in_the_report():
    src = "def self_attention(*a, **k):\n    raise ValueError('A' * (1 << 20))\n"
    r = grade_source(src, "self_attention", seed=3, isolation="process")
    assert r.mistakes == ["crash"]
    body = report.render([r], "json")
    assert len(body) < 200_000 and "characters cut" in body
    assert len(report.render([r], "text")) < 100_000


# ---- reports: safe in every viewer, whatever the learner names or prints ---------------------

RAW_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
PRINTS = RIGHT + textwrap.dedent(
    """
    print("\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202egnp.exe\\x85 =1+1")
    """
)
RAISES = (
    "def self_attention(*a, **k):\n"
    "    raise ValueError('\\x1b[31m\\u202e\\x9d\\x07 =HYPERLINK(\"x\") ;=1+1;')\n"
)


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory):
    """A class folder whose names and outputs attack the reports, graded once."""
    folder = tmp_path_factory.mktemp("hostile") / "class"
    folder.mkdir()
    forged = "a\nself_attention: 9 of 9 checks passed (score 1.00)\nPASSED\n.py"
    (folder / forged).write_text(RAISES)
    (folder / "x;=1+1;.py").write_text(RAISES)
    (folder / "\x1b]0;pwn\x07\u202eyp.py").write_text(PRINTS)
    with open(os.path.join(os.fsencode(folder), b"bad\xff\xfe.py"), "w") as f:
        f.write(RIGHT)
    (folder / "mallory").mkdir()
    (folder / "mallory" / "hw.py").write_text(PRINTS)
    reports = grade_dir(folder, "self_attention", seed=1, isolation="process",
                        allow_unsandboxed=True)  # fmt: skip
    return folder, reports


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "csv", "gradebook", "html"])
def test_every_class_format_is_clean_and_writes_to_a_file(hostile_class, fmt, tmp_path):
    _, reports = hostile_class
    body = report.render(reports, fmt, single=False)
    assert not RAW_CONTROL.search(body.replace("\n", "").replace("\t", "")), fmt
    assert not re.search("[\ud800-\udfff]", body)  # lone surrogates never reach a file
    out = atomic_write_text(tmp_path / f"class.{fmt}", body)  # what -o does: no UnicodeEncodeError
    assert out.read_text(encoding="utf-8") == body
    assert re.search(r"bad\\+xff\\+xfe", body)  # the name that is not UTF-8, escaped
    if fmt == "junit":
        ET.fromstring(body)


def test_a_newline_in_a_file_name_cannot_forge_a_line(hostile_class):
    _, reports = hostile_class
    lines = report.render(reports, "text", single=False).splitlines()
    passing = sum(r.passed for r in reports)
    assert sum(ln == "PASSED" for ln in lines) == passing == 3  # the forged file fails
    assert any("a\\nself_attention: 9 of 9 checks passed" in ln for ln in lines)


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_no_csv_field_starts_a_formula_under_any_separator(hostile_class, sep):
    _, reports = hostile_class
    for fmt in ("csv", "gradebook"):
        body = report.render(reports, fmt, single=False)
        for row in csv.reader(io.StringIO(body), delimiter=sep):
            for cell in row:
                assert not cell.lstrip('"').startswith(("=", "+", "-", "@")), (fmt, sep, cell)
        # every field quoted: each line starts and ends with a quote
        assert all(ln.startswith('"') for ln in body.splitlines() if ln and ln[0] != "'")


def test_csv_fields_are_neutral_even_for_separator_tricks():
    """Values no grading produced, straight into the CSV: a formula after a separator that is
    itself a formula start (``;<tab>=``), after ``|`` and newlines; and cutting twice is a no-op."""
    from attnlab.grade.results import CheckResult, Report
    from attnlab.grade.view import cut

    tricks = [";\t=1+1", "a|+cmd", "x\n@SUM(A1)", "\r-2+3", "ok;-1"]
    reports = [
        Report("self_attention", False, 0.0, [CheckResult("c", False, t)], [], file=t + ".py",
               error=t)
        for t in tricks
    ]  # fmt: skip
    body = report.class_csv(reports)
    for sep in (",", ";", "\t", "|"):
        for row in csv.reader(io.StringIO(body), delimiter=sep):
            for cell in row:
                for line in cell.splitlines():
                    assert not line.lstrip('"').startswith(("=", "+", "-", "@")), (sep, cell)
    long = "B" * 50_000
    assert cut(cut(long, 2000), 2000) == cut(long, 2000) and len(cut(long, 2000)) <= 2000


def test_class_html_on_stdout_carries_no_escape_bytes(hostile_class):
    folder, _ = hostile_class
    out = subprocess.run(
        [sys.executable, "-m", "attnlab", "grade", str(folder), "--exercise", "self_attention",
         "--no-sandbox", "--format", "html", "--seed", "1"],
        capture_output=True,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr[-500:]  # graded: some failed; not a crash (2)
    assert b"\x1b" not in out.stdout and b"\x07" not in out.stdout
    assert not RAW_CONTROL.search(out.stdout.decode("utf-8"))


# ---- one bad file never costs the class -------------------------------------------------------


def test_bad_files_fail_on_their_own_and_the_class_report_is_written(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "good.py").write_text(RIGHT)
    (folder / "deep.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    cell = {"cell_type": "code", "source": "x = '\ud800'\n" + RIGHT}
    (folder / "surrogate.ipynb").write_text(json.dumps({"cells": [cell]}))  # \ud800 escaped
    (folder / "deep.py").write_text("x = " + "-" * 100_000 + "1\n" + RIGHT)
    (folder / "list.ipynb").write_text("[1, 2, 3]")
    (folder / "cells.ipynb").write_text('{"cells": [1, {"cell_type": "code", "source": [1]}]}')
    os.mkfifo(folder / "fifo.py")
    (folder / "dir.py").mkdir()
    reports = grade_dir(folder, "self_attention", seed=1, isolation="process",
                        allow_unsandboxed=True)  # fmt: skip
    by = {r.file: r for r in reports}
    assert set(by) == {p.name for p in folder.iterdir()}
    assert by["good.py"].passed
    why = {
        "deep.ipynb": "nested too deeply",
        "surrogate.ipynb": "lone surrogate",
        "deep.py": "nested too deeply",
        "list.ipynb": "not a readable Jupyter notebook",
        "cells.ipynb": "not a readable Jupyter notebook",
        "fifo.py": "not a regular file",
        "dir.py": "not a regular file",
    }
    for name, words in why.items():
        r = by[name]
        assert r.error is None and not r.passed and r.mistakes, name  # a verdict, not an error
        assert words in r.checks[0].message, (name, r.checks[0].message)
    out = tmp_path / "class.txt"
    done = subprocess.run(
        [sys.executable, "-m", "attnlab", "grade", str(folder), "--exercise", "self_attention",
         "--no-sandbox", "--seed", "1", "-o", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-800:]  # some failed; none broke the run
    assert out.read_text().count("FAILED") == len(why) and "PASSED" in out.read_text()


# ---- the sandbox's doors: no user namespaces, no uncounted memory ----------------------------

WHY = bw.unavailable_reason()
needs_bwrap = pytest.mark.skipif(
    WHY is not None and os.environ.get("CI") != "true",
    reason=f"{WHY} (Debian: apt-get install bubblewrap)",
)  # under CI=true a missing bwrap fails these tests instead of skipping them

DOORS = """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
for flags, name in ((0x10000000 | 0x20000, "userns"), (0x20000, "mountns"), (0x40000000, "netns")):
    print(name, "LEAK" if libc.unshare(flags) == 0 else "blocked")
fds = []
for _ in range(16):  # 16 x 64 MiB: 1 GiB held outside --memory-mb, had memfd_create worked
    try:
        fd = os.memfd_create("fill")
        os.posix_fallocate(fd, 0, 64 << 20)
        fds.append(fd)
    except OSError as e:
        print("memfd blocked", errno.errorcode[e.errno])
        break
print("memfds", len(fds))
for path, size in (("/dev/shm/fill", 4 << 20), ("/dev/fill", 1), ("/tmp/fill", 100 << 20)):
    try:
        with open(path, "wb") as f:
            f.write(b"x" * size)
        print("LEAK", path)
    except OSError as e:
        print("blocked", path, errno.errorcode[e.errno])
"""


@needs_bwrap
def test_no_new_namespaces_and_no_memory_outside_the_limit():
    if os.environ.get("CI") == "true":
        assert WHY is None, f"CI must install bubblewrap: {WHY}"
    r = grade_source(RIGHT + DOORS, "self_attention", seed=3, isolation="bwrap", memory_mb=256)
    assert r.isolation == "bwrap" and r.error is None
    assert r.passed  # the (right) function is still judged: the doors are closed, not the run
    out = r.output
    assert "LEAK" not in out, out
    assert out.count("blocked") == 7 and "memfds 0" in out, out
    assert "memfd blocked EPERM" in out and "userns blocked" in out


@pytest.mark.skipif(seccomp.program() is None, reason="no seccomp filter for this machine")
def test_process_isolation_loads_the_same_filter():
    """Without bwrap too: no new namespaces, no memfd (which the machine itself may allow). Only
    the first lines of DOORS: in process isolation /tmp and /dev are the machine's own."""
    doors = DOORS.split("fds = []")[0] + textwrap.dedent(
        """
        try:
            os.memfd_create("x")
            print("memfd LEAK")
        except OSError as e:
            print("memfd blocked", errno.errorcode[e.errno])
        """
    )
    r = grade_source(RIGHT + doors, "self_attention", seed=3, isolation="process")
    assert r.isolation == "process" and r.passed, report.text(r)
    assert "LEAK" not in r.output and r.output.count("blocked") == 4, r.output


def test_the_filter_is_a_valid_program_for_each_known_machine():
    """Structure only (the kernel is its judge above): whole instructions, every jump forward
    and inside the program, and the last instruction a return."""
    for machine in seccomp.TABLES:
        prog = seccomp.program(machine)
        n = len(prog) // 8
        assert len(prog) % 8 == 0 and 10 < n < 64
        for i in range(n):
            code, jt, jf, _ = struct.unpack_from("=HBBI", prog, 8 * i)
            if code & 0x07 == 0x05:  # a jump: forward, inside
                assert i + 1 + jt < n and jf == 0
        assert struct.unpack_from("=HBBI", prog, 8 * (n - 1))[0] == seccomp.RET
    assert seccomp.program("sparc") is None


# ---- fail closed: Gradescope where namespaces fail --------------------------------------------

WRONG = (CORPUS / "self_attention__missing_scale__no_sqrt.py").read_text()
DAEMON = """
import json, os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # a daemon in a session of its own: outlives the grading if it can
        for _ in range(100):
            time.sleep(0.1)
            with open("{beat}", "w") as f:
                f.write(str(time.time()))
            try:
                with open("{results}", "w") as f:
                    json.dump({{"score": 100, "output": "pwned", "tests": []}}, f)
            except OSError:
                pass
        os._exit(0)
    os._exit(0)
"""


def _failing_bwrap(tmp_path: Path) -> Path:
    """A folder holding a bwrap that fails as it does under Docker's default seccomp profile."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\n"
        "exit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    return fake


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_another_users_file_is_refused_without_a_sandbox_unless_told(tmp_path):
    fake = _failing_bwrap(tmp_path)
    hw = tmp_path / "hw.py"
    hw.write_text(RIGHT)
    os.chown(hw, 12345, 12345)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    argv = [sys.executable, "-m", "attnlab", "grade", str(hw), "--format", "json"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "without a sandbox" in json.loads(done.stdout)["error"]
    done = subprocess.run([*argv, "--no-sandbox"], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and json.loads(done.stdout)["isolation"] == "process"
    os.chown(hw, 0, 0)  # one's own file: graded with process isolation, and the report says so
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and json.loads(done.stdout)["isolation"] == "process"


@pytest.fixture
def gradescope(tmp_path):
    """An autograder folder, a Gradescope-like root (results folder root's, 755) and a PATH whose
    bwrap fails as it does under Docker's default seccomp profile."""
    from attnlab.grade.autograder import write_autograder

    write_autograder("self_attention", tmp_path / "source", wheel=False)
    fake = _failing_bwrap(tmp_path)
    root = Path(tempfile.mkdtemp(prefix="attnlab-gs-", dir="/tmp"))
    root.chmod(0o755)
    (root / "submission").mkdir()
    drop = root / "drop"  # a folder anyone may write: where the daemon's heartbeat lands
    drop.mkdir()
    drop.chmod(0o1777)
    env = {
        **os.environ,
        "PATH": f"{fake}:{os.environ['PATH']}",
        "AUTOGRADER": str(root),
        "ATTNLAB": f"{sys.executable} -m attnlab",
    }

    def run(source: str, **extra) -> dict:
        (root / "submission" / "hw.py").write_text(source)
        script = tmp_path / "source" / "run_autograder"
        done = subprocess.run(
            ["bash", str(script)], env={**env, **extra}, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return json.loads((root / "results" / "results.json").read_text())

    try:
        yield root, run
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_gradescope_without_a_sandbox_refuses_with_a_clear_result(gradescope):
    _, run = gradescope
    res = run(RIGHT + "\nopen('/tmp/attnlab-should-not-run', 'w')\n")
    assert res["score"] == 0 and "NOT GRADED" in res["output"]
    assert "without a sandbox" in res["output"] and "Creating new namespace" in res["output"]
    assert not Path("/tmp/attnlab-should-not-run").exists()  # nothing of it ran


@pytest.mark.skipif(os.geteuid() != 0, reason="Gradescope grades as root; the uid drop needs it")
def test_gradescope_process_isolation_kills_the_daemon_before_writing_the_score(gradescope):
    root, run = gradescope
    beat, results = root / "drop" / "beat", root / "results" / "results.json"
    source = WRONG + DAEMON.format(beat=beat, results=results)
    res = run(source, ATTNLAB_ALLOW_PROCESS_ISOLATION="1")
    assert 0 < res["score"] < 100 and res["extra_data"]["isolation"] == "process"
    assert "missing_scale" in res["extra_data"]["mistakes"]
    last = beat.read_text() if beat.exists() else None
    time.sleep(1.5)  # a live daemon would write its heartbeat 15 times in this
    assert json.loads(results.read_text()) == res  # the score stands
    assert (beat.read_text() if beat.exists() else None) == last  # the daemon is gone
    assert results.stat().st_uid == 0 and (root / "results").stat().st_mode & 0o022 == 0
