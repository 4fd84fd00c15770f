"""Hostile submissions: the grader survives, reports, and is neither fooled nor harmed.

Each attack is a learner file with a correct (or wrong) ``self_attention`` plus a few hostile
lines. What the attack could see or do is checked from outside (files, processes, sockets, the
installed package) and, where useful, from what it printed (the report shows printed output).
Under CI=true a missing bwrap fails these tests instead of skipping them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import resource
import socket
import tempfile
import textwrap
import time
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import attnlab
from attnlab.grade import UnsafeClassError, grade_dir, grade_source, report
from attnlab.grade import bwrap as bw

CORPUS = Path(__file__).parent / "submissions"
RIGHT = (CORPUS / "self_attention__pass__vectorized.py").read_text()
WRONG = (CORPUS / "self_attention__missing_scale__no_sqrt.py").read_text()
PACKAGE = Path(attnlab.__file__).resolve().parent
WHY = bw.unavailable_reason()

needs_bwrap = pytest.mark.skipif(
    WHY is not None and os.environ.get("CI") != "true",
    reason=f"{WHY} (Debian: apt-get install bubblewrap)",
)


@pytest.fixture(autouse=True)
def _bwrap_in_ci():
    if os.environ.get("CI") == "true":
        assert WHY is None, f"CI must install bubblewrap: {WHY}"


def grade(body: str, base: str = RIGHT, **kw):
    kw.setdefault("isolation", "bwrap")
    return grade_source(base + "\n" + textwrap.dedent(body), "self_attention", seed=3, **kw)


def _alive(marker: str) -> list[int]:
    found = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if marker.encode() in (p / "cmdline").read_bytes():
                    found.append(int(p.name))
            except OSError:
                pass
    return found


def _children() -> set[str]:
    """The grader's own child processes (none started by a grading should outlive it)."""
    me = os.getpid()
    return set(Path(f"/proc/{me}/task/{me}/children").read_text().split())


def _leftover_temp() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("attnlab-grade-*")}


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """A temp folder of this test's own, so other gradings on the machine cannot disturb it."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _tree_hash(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*.py")):
        h.update(p.read_bytes())
    return h.hexdigest()


@needs_bwrap
def test_killing_the_parent_does_not_kill_the_grader():
    before = _children()
    r = grade("import os, signal\nos.kill(os.getppid(), 9)\nos.killpg(0, signal.SIGKILL)\n")
    assert r.isolation == "bwrap" and not r.error  # the grader lived to give a verdict
    # the kill was refused inside the sandbox, and that is what the report says
    assert r.mistakes == ["crash"] and "PermissionError" in r.checks[-1].message
    assert _children() - before == set()


@needs_bwrap
def test_a_background_process_cannot_hold_the_grader_past_its_timeout():
    marker = "attnlab-hold-pipe-31337"
    start = time.monotonic()
    r = grade(
        f"""
        import subprocess, sys
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "{marker}"],
                         start_new_session=True)
        import time
        time.sleep(30)
        """,
        timeout=2,
    )
    took = time.monotonic() - start
    assert r.mistakes == ["timeout"] and took < 2 + 5, took
    time.sleep(0.3)
    assert _alive(marker) == []


@needs_bwrap
def test_fifty_background_processes_are_all_gone_after_grading():
    marker = "attnlab-background-4242"
    r = grade(
        f"""
        import subprocess, sys
        for _ in range(50):
            try:
                subprocess.Popen([sys.executable, "-c", "import time; time.sleep(8)", "{marker}"])
            except OSError:
                break
        """
    )
    assert r.checks
    time.sleep(0.3)
    assert _alive(marker) == []


@pytest.mark.parametrize(
    "route",
    [
        'ref = importlib.__import__("attnlab.ref", fromlist=["x"])',
        'ns = {}\nexec("import attnlab.ref as ref", ns)\nref = ns["ref"]',
        'import importlib.util as u\nspec = u.spec_from_file_location("r", "{pkg}/ref/__init__.py")'
        "\nref = u.module_from_spec(spec)\nspec.loader.exec_module(ref)",
        'ref = importlib.import_module("torch")',
    ],
    ids=["__import__", "exec", "from_file", "import_module_torch"],
)
@needs_bwrap
def test_the_reference_cannot_be_borrowed(route):
    body = "import importlib\n" + route.replace("{pkg}", str(PACKAGE)) + "\n"
    body += (
        "def self_attention(X, W_Q, W_K, W_V, mask=False):\n"
        "    Q, K, V = X @ W_Q, X @ W_K, X @ W_V\n"
        "    return ref.scaled_dot_product_attention(Q, K, V, is_causal=mask, "
        "return_weights=True)\n"
    )
    r = grade(body, base="")
    assert not r.passed
    assert r.mistakes[0] in ("forbidden_import", "crash"), r.mistakes


@needs_bwrap
def test_the_installed_package_cannot_be_changed():
    before = _tree_hash(PACKAGE)
    r = grade(
        f"""
        for p in ["{PACKAGE}/parity.py", "{PACKAGE}/grade/grader.py"]:
            try:
                with open(p, "a") as f:
                    f.write("\\ndef compare(*a, **k):\\n    return True\\n")
                print("LEAK wrote", p)
            except OSError as e:
                print("blocked", type(e).__name__)
        """
    )
    assert "LEAK" not in r.output and "blocked" in r.output
    assert _tree_hash(PACKAGE) == before
    assert not grade("", base=WRONG).passed  # and a later wrong answer still fails


@needs_bwrap
def test_classmates_files_are_out_of_reach(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text(RIGHT)
    (folder / "bob.py").write_text(WRONG)
    attack = RIGHT + textwrap.dedent(
        f"""
        import os, glob
        targets = glob.glob("{folder}/*.py") + glob.glob("/proc/*/cwd/*.py")
        for pid in os.listdir("/proc"):
            try:
                print("sees", open(f"/proc/{{pid}}/cmdline").read().replace("\\0", " ")[:80])
            except OSError:
                pass
        for t in targets:
            try:
                open(t, "w").write("def self_attention(*a):\\n    raise SystemExit\\n")
                print("LEAK overwrote", t)
            except OSError:
                pass
        print("targets", len(targets))
        """
    )
    (folder / "mallory.py").write_text(attack)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    reports = {Path(r.file).name: r for r in grade_dir(folder, "self_attention", jobs=2, seed=1)}
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert reports["alice.py"].passed and not reports["bob.py"].passed
    out = reports["mallory.py"].output
    assert "LEAK" not in out and "targets 0" in out
    assert "pytest" not in out and "attnlab" not in out  # no grader processes in view


@needs_bwrap
def test_the_machine_is_out_of_reach():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    port = server.getsockname()[1]
    tag = uuid.uuid4().hex
    host_tmp = Path(tempfile.gettempdir()) / f"attnlab-attack-{tag}"
    host_shm = Path("/dev/shm") / f"attnlab-attack-{tag}"
    os.environ["ATTNLAB_TEST_SECRET"] = "hunter2"
    try:
        r = grade(
            f"""
            import os, socket
            def attempt(name, fn):
                try:
                    fn()
                    print("LEAK", name)
                except Exception as e:
                    print("blocked", name, type(e).__name__)
            attempt("passwd", lambda: open("/etc/passwd").read())
            attempt("root_home", lambda: os.listdir("/root/.ssh"))
            attempt("home", lambda: os.listdir("/home"))
            attempt("net", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=1))
            open("{host_tmp}", "w").write("x")  # lands in the sandbox's private /tmp only
            attempt("big_tmp", lambda: open("/tmp/big", "wb").write(b"x" * (300 << 20)))
            attempt("uid0", lambda: os.setuid(0))
            print("uid", os.getuid(), "secret" if "hunter2" in str(os.environ) else "no-secret")
            try:
                with open("{host_shm}", "wb") as f:
                    f.write(b"private")
            except OSError:
                pass
            """
        )
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()
        del os.environ["ATTNLAB_TEST_SECRET"]
    assert "LEAK" not in r.output, r.output
    assert r.output.count("blocked") == 6 and "no-secret" in r.output
    assert "uid 65534" in r.output
    assert not host_tmp.exists() and not host_shm.exists()


@needs_bwrap
def test_a_flood_of_output_is_capped(tmp_path):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = grade("import sys\nfor _ in range(160):\n    sys.stdout.write('x' * 2**20)\n")
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert r.passed and grown_mib < 64, grown_mib  # 160 MiB printed, at most 1 MiB kept
    assert "more characters not shown" in r.output and len(r.output) < 10_000


@needs_bwrap
def test_an_answer_cast_to_float16_is_held_to_the_tasks_precision():
    body = """
    _right = self_attention
    def self_attention(X, W_Q, W_K, W_V, mask=False):
        out, w = _right(X, W_Q, W_K, W_V, mask)
        return (out * 1.001).astype(np.float16), w.astype(np.float16)
    """
    assert not grade(body).passed
    exact = """
    _right = self_attention
    def self_attention(X, W_Q, W_K, W_V, mask=False):
        out, w = _right(X, W_Q, W_K, W_V, mask)
        return out.astype(np.float16), w.astype(np.float16)
    """
    assert not grade(exact).passed  # float16 itself is too coarse for a float32/64 task


@needs_bwrap
def test_a_writer_in_the_background_leaves_no_temp_folder_and_no_internal_error(private_tmp):
    before = _leftover_temp()
    r = grade(
        """
        import os, subprocess, sys
        code = "import os, itertools\\nfor i in itertools.count():\\n    open(f'f{i}', 'w').write('x')"
        subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        """
    )
    assert r.error is None and r.passed
    assert _leftover_temp() == before == set()
    assert list(private_tmp.iterdir()) == []


@needs_bwrap
def test_escapes_in_messages_cannot_break_reports():
    evil = "\\x1b[2J\\x1b]0;pwned\\x07 ]]> </failure><x a='\\x00\\x0c'>"
    r = grade(f'def self_attention(*a):\n    raise ValueError("{evil}")\n', base="")
    assert not r.passed
    xml = report.junit([r])
    ET.fromstring(xml)  # parses
    text = report.text(r)
    assert "\x1b" not in text and "\x07" not in text and "\x00" not in text


@needs_bwrap
def test_formula_file_names_are_neutralised_in_csv(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "=2+5+cmd|calc.py").write_text(RIGHT)
    (folder / "@sum.py").write_text(WRONG)
    rows = list(csv.reader(io.StringIO(report.class_csv(grade_dir(folder, seed=1)))))
    cells = [c for row in rows[1:] for c in row]
    assert all(not c.startswith(("=", "+", "-", "@")) for c in cells), cells
    assert any(c.startswith("'") and "=2+5+cmd|calc.py" in c for c in cells)


@needs_bwrap
def test_a_symlink_in_a_class_folder_is_not_followed(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    secret = tmp_path / "teacher_key.py"
    secret.write_text("TOKEN = 'sk-teacher-only'\n")
    (folder / "link.py").symlink_to(secret)
    (folder / "ok.py").write_text(RIGHT)
    reports = grade_dir(folder, "self_attention", seed=1)
    text = "\n".join(report.text(r) for r in reports) + report.class_csv(reports)
    assert "sk-teacher-only" not in text
    by = {Path(r.file).name: r for r in reports}
    assert not by["link.py"].passed and by["ok.py"].passed


@needs_bwrap
def test_fork_bomb_and_ctypes_do_not_harm_the_grader():
    before = _children()
    r = grade(
        """
        import os, ctypes
        ctypes.CDLL(None).getpid()
        for _ in range(300):
            try:
                if os.fork() == 0:
                    import time
                    time.sleep(20)
                    os._exit(0)
            except OSError:
                print("fork refused")
                break
        """,
        timeout=5,
    )
    assert r.passed and not r.error  # the verdict on the (right) function is intact
    if os.geteuid() == 0:  # bwrap as root also caps the number of processes
        assert "fork refused" in r.output
    assert _children() - before == set()  # every forked process went with the sandbox


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["--timeout", "0"], "--timeout"),
        (["--timeout", "-1"], "--timeout"),
        (["--memory-mb", "-5"], "--memory-mb"),
        (["--memory-mb", "50"], "--memory-mb"),
        (["--jobs", "0"], "--jobs"),
    ],
)
def test_limits_that_would_blame_every_submission_are_usage_errors(argv, flag, capsys):
    from attnlab.cli import main

    assert main(["grade", str(CORPUS), *argv]) == 2  # before a file is graded
    err = capsys.readouterr().err
    assert flag in err and len(err.strip().splitlines()) == 1


def test_an_internal_error_is_exit_2_not_a_failed_submission(tmp_path, monkeypatch):
    from attnlab.grade import sandbox

    def broken(*a, **k):
        raise sandbox.SandboxError("simulated sandbox failure")

    monkeypatch.setattr("attnlab.grade.grader.run_submission", broken)
    from attnlab.grade import grade_file

    r = grade_file(CORPUS / "self_attention__pass__vectorized.py")
    assert r.error and "simulated" in r.error and not r.mistakes
    assert "GRADER ERROR" in report.text(r) and "FAILED" not in report.text(r)


def test_process_isolation_lets_a_submission_import_the_standard_library_it_names():
    """As root, process isolation runs the code as a uid that may not read the interpreter's
    files (here, a pyenv under /root): the standard-library modules the source names are loaded
    before it drops to that uid (none of these is one NumPy loads)."""
    for name in ("statistics", "importlib.util", "heapq"):
        r = grade_source(f"import {name}\n{RIGHT}", "self_attention", isolation="process")
        assert r.passed and r.isolation == "process", (name, r.mistakes, report.text(r))


def test_process_isolation_is_said_and_class_mode_refuses_it(tmp_path):
    r = grade_source(RIGHT, "self_attention", isolation="process")
    assert r.passed and r.isolation == "process"
    assert "process only" in report.text(r)
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "a.py").write_text(RIGHT)
    with pytest.raises(UnsafeClassError, match="--no-sandbox"):
        grade_dir(folder, isolation="process")
    (r2,) = grade_dir(folder, isolation="process", allow_unsandboxed=True)
    assert r2.passed and r2.isolation == "process"
