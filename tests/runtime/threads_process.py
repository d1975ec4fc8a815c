#!/usr/bin/env python3
"""Thread dumps of a live process (docs/threads.md): `probekit threads PID`
(text, JSON, file:line, refusals), the external signal to a 0600 sink file,
and the panic handler (dump written, process dies of the original signal with
a core)."""
import json
import os
import pwd
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

PROBEKIT = os.environ["PROBEKIT"]
TARGET = os.environ["THREADS_TARGET"]
failures = []


def check(cond, what, detail=""):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}\n{detail[-3000:]}", file=sys.stderr)


def start_target(*args, stderr=subprocess.DEVNULL):
    p = subprocess.Popen([TARGET, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True)
    pid = int(p.stdout.readline())
    return p, pid


def probekit(*args, **kw):
    return subprocess.run([PROBEKIT, "threads", *args], capture_output=True, text=True, timeout=60, **kw)


def threads_cli():
    target, pid = start_target()
    try:
        r = probekit(str(pid), "--interrupt-all")
        check(r.returncode == 0, "probekit threads PID exits 0", r.stderr)
        for kind in ("sleep", "wait", "read"):
            for level in range(1, 6):
                check(f" pk_{kind}_{level}+0x" in r.stdout, f"text dump shows pk_{kind}_{level}", r.stdout)
        check(len(re.findall(r'^Thread \d+ tid \d+ "', r.stdout, re.M)) >= 65, "every thread listed", r.stdout)
        check("probekit-sig28" in r.stdout, "the service thread is listed", r.stdout)

        r = probekit(str(pid), "--format", "json")
        check(r.returncode == 0, "--format json exits 0", r.stderr)
        d = json.loads(r.stdout)
        names = {t["name"] for t in d["threads"]}
        check(all(f"sleep-{i}" in names for i in range(22)), "json names every sleeper", r.stdout)
        check(d["mode"] == "running" and d["pid"] == pid, "json says mode and pid", r.stdout)
        blocked = [t for t in d["threads"] if t["name"].startswith("read-")]
        check(all(t["syscall"] == "read" and not t["captured"] for t in blocked),
              "default mode: pipe readers reported from /proc, not signalled", r.stdout)

        r = probekit(str(pid), "--interrupt-all", "--lines")
        check(re.search(r"pk_read_5\+0x[0-9a-f]+ \(.*\) at .*threads_workload\.cc:\d+", r.stdout) is not None,
              "--lines adds file:line", r.stdout)

        # Not the runtime's user: refused before any signal is sent.
        sleeper = subprocess.Popen(["sleep", "30"])
        r = probekit(str(sleeper.pid))
        check(r.returncode == 1 and "does not serve probekit thread dumps" in r.stderr,
              "a process without libprobekit is refused clearly", r.stderr)
        check(sleeper.poll() is None, "and is left alone")
        sleeper.kill()
        sleeper.wait()

        r = probekit("999999999")
        check(r.returncode == 1 and "no process 999999999" in r.stderr, "no such process", r.stderr)
        r = probekit()
        check(r.returncode == 2, "usage error exits 2", r.stderr)

        if os.getuid() == 0:
            nobody = pwd.getpwnam("nobody")
            r = probekit(str(pid), preexec_fn=lambda: (os.setgid(nobody.pw_gid), os.setuid(nobody.pw_uid)))
            check(r.returncode == 1 and "permission denied" in r.stderr, "another user is refused", r.stderr)
        else:
            print("not root: the permission case is not run")
    finally:
        target.stdin.close()
        target.wait(timeout=30)


def switches(pid):
    """Scheduler switch count of every thread but the service thread."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            if open(f"/proc/{pid}/task/{tid}/comm").read().startswith("probekit-sig"):
                continue
            total += int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[2])
        except FileNotFoundError:
            pass
    return total


def cli_wakes_nobody():
    # The request goes to the service thread itself (rt_tgsigqueueinfo), and
    # the default mode signals no blocked thread: not one application thread
    # (64 blocked workers, the main thread in read) is woken up. A
    # process-directed signal would have woken the main thread every time.
    if not os.path.exists("/proc/self/schedstat"):
        print("no schedstat in /proc: the wake-up check is not run")
        return
    target, pid = start_target()
    try:
        # The main thread prints the pid before it blocks in read: let it get there.
        for _ in range(100):
            if open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "S":
                break
            time.sleep(0.01)
        time.sleep(0.2)
        before = switches(pid)
        for _ in range(5):
            r = probekit(str(pid))
            check(r.returncode == 0 and r.stdout.count("\nThread ") >= 64, "default-mode dump", r.stderr)
        after = switches(pid)
        check(after == before, f"a default-mode dump wakes no application thread ({after - before} switches)")
    finally:
        target.stdin.close()
        target.wait(timeout=30)


def external_signal_to_sink():
    with tempfile.TemporaryDirectory() as tmp:
        pattern = os.path.join(tmp, "dump-%p-%n.txt")
        target, pid = start_target("--sink", pattern)
        try:
            os.kill(pid, signal.SIGWINCH)
            path = os.path.join(tmp, f"dump-{pid}-1.txt")
            for _ in range(200):
                if os.path.exists(path) and open(path).read().count("\nThread ") >= 64:
                    break
                time.sleep(0.05)
            text = open(path).read() if os.path.exists(path) else ""
            check(f"probekit thread dump #1 of pid {pid}" in text, "kill -WINCH writes a dump to the sink", text)
            check(os.path.exists(path) and (os.stat(path).st_mode & 0o777) == 0o600, "the sink file is 0600")
            check(target.poll() is None, "the process lives on")
        finally:
            target.stdin.close()
            target.wait(timeout=30)


def panic(how, sig):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        # Let the program's own handler run (ASan would take SIGSEGV and exit
        # with its own status) and let it dump core (ASan disables cores).
        env["ASAN_OPTIONS"] = "handle_segv=0:handle_abort=0:disable_coredump=0"
        env["UBSAN_OPTIONS"] = "handle_segv=0:handle_abort=0"

        def limits():
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

        p = subprocess.Popen([TARGET, "--running", "0", "--crash", how], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=tmp, env=env, preexec_fn=limits, text=True)
        out, err = p.communicate(timeout=60)
        code = p.returncode
        check(code == -sig, f"panic {how}: the process dies of signal {sig} (got {code})", err)
        check(f"fatal {signal.Signals(sig).name}" in err, f"panic {how}: the fatal signal is named", err)
        m = re.search(r'^Thread 1 tid \d+ "crasher".*?(?=^Thread 2 )', err, re.M | re.S)
        check(m is not None and re.search(r" pk_crash_3(\.cold)?\+0x", m.group(0)) and " pk_crash_1+0x" in m.group(0),
              f"panic {how}: the faulting thread first, with its stack", err)
        check(err.count("\nThread ") >= 64, f"panic {how}: every thread dumped", err)
        if how == "segv":
            check("at address 0x20" in err, "panic segv: the fault address", err)
        pattern = open("/proc/sys/kernel/core_pattern").read().strip()
        if pattern.startswith("|"):
            print(f"core_pattern pipes to {pattern!r}: the core file is not checked")
        else:
            cores = [f for f in os.listdir(tmp) if f.startswith("core")]
            check(cores, f"panic {how}: a core was dumped ({pattern})", str(os.listdir(tmp)))


threads_cli()
cli_wakes_nobody()
external_signal_to_sink()
panic("segv", signal.SIGSEGV)
panic("abort", signal.SIGABRT)
if failures:
    print(f"{len(failures)} failures", file=sys.stderr)
    sys.exit(1)
print("ok")
