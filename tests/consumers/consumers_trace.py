"""probekit trace: attaches kernel uprobes (tracefs uprobe events opened with
perf_event_open) to the ck test program of consumer_common and prints exactly
the values fired.

- every argument type (signed/unsigned 1/2/4/8, bool, char, pointer, float,
  double, two strings, twelve arguments, the 64-bit extremes) at -O0 and -O2,
  gcc and clang, C and C++, in an executable and in a linked shared library,
  through -c (attached before the command's first instruction, so every
  round is seen: exact hit counts) in JSON and in text;
- -p on a running program whose probes are in a dlopen'ed library;
- threads: one that exists when trace attaches and one started later are
  both traced (and the program's pthread_create still works);
- the same run traced by bpftrace and by probekit trace at once: the same
  values;
- the gate: ck:gated's builder runs only while trace is attached, the
  semaphore goes back to its old value when trace ends (Ctrl-C) and when it
  is killed with SIGKILL (the kernel drops the uprobe with the last fd);
- strings copied at the hit: a gated C++ probe whose builder returns a heap
  std::string (freed, and its block reused, right after the probe fires),
  fired with changing values: trace prints exactly the string of each
  round, and bpftrace in the same run the same ones;
- tracefs: trace's event group (probekit_<pid>) is gone after it ends
  (Ctrl-C, --duration, command exit, an error); one left by a SIGKILLed trace
  is deleted by the next trace, which says so;
- --count (text table, JSON), lost events accounted (hits + lost = fired,
  with a one-page buffer), the summary, and the errors: not root, no such
  PID, nothing matches, a binary without probes, usage errors.

Needs root (uprobes); skips with the reason otherwise.
"""
import json
import os
import re
import signal
import struct
import subprocess
import time

from consumer_common import (Builder, bpftrace_clause, Timer, Variant, expect, finish, gated_runs, need_bpftrace, run, skip,
                             GATE_BASE, PROVIDER, VALUES, PREFIXES, COMDAT_FROM_LIB, COMDAT_FROM_MAIN,
                             PROBEKIT)

if os.geteuid() != 0:
    skip("probekit trace needs root (uprobes through perf_event_open)")
if not os.path.exists("/sys/bus/event_source/devices/uprobe/type"):
    skip("the kernel has no uprobe PMU (CONFIG_UPROBE_EVENTS)")

timer = Timer("trace")
TRACEFS = "/sys/kernel/tracing"


def trace_groups():
    """The probekit_<pid> groups defined in tracefs' uprobe_events."""
    try:
        with open(f"{TRACEFS}/uprobe_events") as f:
            return {m for m in re.findall(r"^[pr]:(probekit_\d+)/", f.read(), re.M)}
    except OSError:
        return set()
C_PROBES = ["ints", "misc", "floats", "sources", "twelve", "wide"]


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f64(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


class Pointer:
    """Any non-null pointer in trace's JSON form ("0x..."): `const char *t` is
    typed as a pointer in .note.probekit (`string s` is the string type)."""

    def __eq__(self, other):
        return isinstance(other, str) and re.fullmatch(r"0x[0-9a-f]+", other) is not None and other != "0x0"

    def __repr__(self):
        return "<pointer>"


def expected(name):
    """What trace prints for one round of `name`, as JSON values."""
    v = list(VALUES[name])
    if name == "misc":
        return [True, 120, "0x1234", "hello", Pointer(), -3000000000]
    if name == "floats":
        return [f32(v[0]), f64(v[1])]
    return v


TEXT_WANT = {  # the text form of the non-integer values
    "misc": "b=true c=120 p=0x1234 s=\"hello\" t=PTR neg=-3000000000",
    "floats": "f=1.5 d=-2.25",
}


def trace(args, timeout=300, **kw):
    return run([PROBEKIT, "trace", *args], timeout=timeout, **kw)


def json_lines(text):
    out = []
    for line in text.splitlines():
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def hits_by_probe(docs):
    hits = {}
    for d in docs:
        if d.get("type") == "hit":
            hits.setdefault(d["probe"], []).append(list(d["args"].values()))
    return hits


variants = [Variant("c", "gcc", "-O0"), Variant("c", "gcc", "-O2"), Variant("c++", "clang", "-O0"),
            Variant("c++", "clang", "-O2"), Variant("c", "clang", "-O0", kind="shared"),
            Variant("c++", "gcc", "-O2", kind="shared"), Variant("c", "gcc", "-O2", kind="dlopen")]
builder = Builder("trace")
builds = builder.build(variants)
ROUNDS = 3


def check_values_c(b):
    """-c: attached before the program runs, so all ROUNDS rounds are seen."""
    v = b.variant
    r = trace(["-c", f"{b.prog} fire {ROUNDS} 0", "--format", "json", f"{PROVIDER}:*"])
    docs = json_lines(r.stdout)
    summ = [d for d in docs if d.get("type") == "summary"]
    ok = r.returncode == 0 and summ and summ[-1].get("ended") == "command exited" and summ[-1].get("command_status") == 0
    expect(ok, f"{v.name}: trace -c runs the program to its end (exit {r.returncode}, summary {summ[-1:] or r.stderr[-800:]})")
    hits = hits_by_probe(docs)
    for name in C_PROBES:
        want = expected(name)
        got = hits.get(name, [])
        bad = [h for h in got if want != h]
        expect(len(got) == ROUNDS and not bad,
               f"{v.name}: trace reads {PROVIDER}:{name} as {want} ({len(got)} of {ROUNDS} hits"
               + (f"; wrong: {bad[:2]})" if bad else ")"))
    if v.lang == "c++":
        got = {tuple(h) for h in hits.get("comdat", [])}
        want = COMDAT_FROM_MAIN | COMDAT_FROM_LIB
        expect(got == want, f"{v.name}: trace reads the COMDAT sites' values ({sorted(got)})")
    expect("gated" not in hits, f"{v.name}: the gated probe is not hit by `fire`")
    expect(summ and summ[-1].get("hits") == sum(len(x) for x in hits.values()) and summ[-1].get("lost") == 0,
           f"{v.name}: the summary counts every hit, none lost ({summ[-1:]})")


def check_uprobe_pmu(b):
    """--uprobe-pmu, the path without tracefs: the same values, and no
    tracefs event defined."""
    r = trace(["-c", f"{b.prog} fire {ROUNDS} 0", "--format", "json", "--uprobe-pmu", f"{PROVIDER}:ints",
               f"{PROVIDER}:misc"])
    hits = hits_by_probe(json_lines(r.stdout))
    ok = all(hits.get(n) == [expected(n)] * ROUNDS for n in ("ints", "misc"))
    expect(r.returncode == 0 and ok and "falling back to the uprobe PMU" in r.stderr,
           f"{b.variant.name}: --uprobe-pmu reads the same values and says what it does ({hits}; {r.stderr.strip()[-300:]})")


def check_text(b):
    r = trace(["-c", f"{b.prog} fire 1 0", f"{PROVIDER}:misc", f"{PROVIDER}:floats", f"{PROVIDER}:ints"])
    lines = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^(\d+\.\d{9}) (\d+) ck:(\w+)(.*)$", line)
        if m:
            lines[m.group(3)] = re.sub(r"t=0x[0-9a-f]+", "t=PTR", m.group(4).strip())
    for name, want in TEXT_WANT.items():
        expect(lines.get(name) == want, f"{b.variant.name}: text line of {PROVIDER}:{name} is `{want}` ({lines.get(name)})")
    ints = " ".join(f"{k}={x}" for k, x in zip("abcdefgh", VALUES["ints"]))
    expect(lines.get("ints") == ints, f"{b.variant.name}: text line of {PROVIDER}:ints ({lines.get('ints')})")
    expect("fired 1" in r.stdout and re.search(r"probekit trace: \d+ hits, 0 lost, .*ended: command exited \(exit status 0\)",
                                               r.stderr),
           f"text: the program's output passes through, the summary goes to stderr ({r.stderr.strip()[-300:]})")
    # --string-size cuts the string the kernel copied (and says so with ...).
    r = trace(["-c", f"{b.prog} fire 1 0", "--string-size", "3", f"{PROVIDER}:misc"])
    expect(re.search(r' ck:misc .*s="hel"\.\.\. t=0x', r.stdout) is not None,
           f"--string-size 3 prints s=\"hel\"... ({r.stdout.strip()[-200:]})")


class Running:
    """A program started here, with probekit trace -p or bpftrace attached."""

    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait(self, timeout=120):
        out, err = self.p.communicate(timeout=timeout)
        return out, err, self.p.returncode


def start_trace(args, ready_timeout=60):
    """Starts probekit trace; returns the Popen once it says it is attached."""
    p = subprocess.Popen([PROBEKIT, "trace", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err = []
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        err.append(line)
        if "Ctrl-C to stop" in line:
            return p, "".join(err)
    return p, "".join(err)


def check_pid_dlopen(b):
    """-p on a process whose probes live in a dlopen'ed library."""
    prog = Running([b.prog, "fire", "30", "100"])
    time.sleep(0.5)
    p, err0 = start_trace(["-p", str(prog.p.pid), f"{PROVIDER}:ints", f"{PROVIDER}:misc"])
    out, err, _ = prog.wait()
    tout, terr = p.communicate(timeout=60)
    expect(p.returncode == 0 and "ended: process exited" in terr,
           f"{b.variant.name}: trace -p ends when the process exits ({(err0 + terr).strip()[-400:]})")
    got, tids = {}, set()
    for line in tout.splitlines():
        m = re.match(r"^\d+\.\d+ (\d+) ck:(\w+) (.*)$", line)
        if m:
            tids.add(int(m.group(1)))
            got.setdefault(m.group(2), set()).add(re.sub(r"t=0x[0-9a-f]+", "t=PTR", m.group(3)))
    expect(tids == {prog.p.pid}, f"{b.variant.name}: every line carries the program's thread id ({tids})")
    want_ints = " ".join(f"{k}={x}" for k, x in zip("abcdefgh", VALUES["ints"]))
    # -p cannot hold the process at its exit: the string of a hit that comes
    # right before the exit is read from a process that is gone (the
    # program exits just after its last round).
    last = [line for line in tout.splitlines() if " ck:misc " in line][-1:]
    misc = got.get("misc", set()) - ({re.sub(r"t=0x[0-9a-f]+", "t=PTR", last[0].split(" ", 3)[3])}
                                     if last and "s=<unreadable>" in last[0] else set())
    expect(got.get("ints") == {want_ints} and misc == {TEXT_WANT["misc"]},
           f"{b.variant.name}: trace -p reads the dlopen'ed library's probes exactly ({got})")


# misc's `string s`; `const char *t` is a pointer to both tools here.
BT_STRINGS = {("misc", 3)}


def bt_values(text):
    hits = {}
    for line in text.splitlines():
        if line.startswith("PKHIT\t"):
            parts = line.split("\t")[1:]
            name, vals = parts[0], parts[1:]
            hits.setdefault(name, set()).add(tuple(x if (name, i) in BT_STRINGS else int(x) for i, x in enumerate(vals)))
    return hits


def as_bpftrace(name, args):
    """probekit trace's JSON values the way the bpftrace script prints them
    (arg0..arg5; bool, char and pointer as integers, floats as their bits)."""
    out = []
    for i, x in enumerate(args[:6]):
        if isinstance(x, bool):
            x = int(x)
        elif isinstance(x, float):
            x = struct.unpack("<I", struct.pack("<f", x))[0] if PREFIXES[name][i] == "4" else \
                struct.unpack("<Q", struct.pack("<d", x))[0]
        elif isinstance(x, str) and x.startswith("0x"):
            x = int(x, 16)
        out.append(x)
    return tuple(out)


def start_bpftrace(pid, script):
    """bpftrace -p PID running script, and what it printed first: returned
    once its BEGIN clause has printed PKREADY (every probe attached), or once
    it has exited."""
    bt = subprocess.Popen(["bpftrace", "-p", str(pid), "-e", 'BEGIN { printf("PKREADY\\n"); }\n' + script],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = ""
    while "PKREADY" not in seen:
        line = bt.stdout.readline()
        if not line:
            break
        seen += line
    return bt, seen

def check_same_run_as_bpftrace(b):
    """bpftrace and probekit trace attached to the same run at once."""
    need_bpftrace()
    prog = Running([b.prog, "fire", "80", "100"])
    bt, first = start_bpftrace(prog.p.pid, "\n".join(bpftrace_clause(b.prog, name, BT_STRINGS) for name in C_PROBES))
    p, _ = start_trace(["-p", str(prog.p.pid), "--format", "json", *[f"{PROVIDER}:{n}" for n in C_PROBES]])
    # Both stop while the program still runs: a string is then always
    # readable when trace prints it (see check_pid_dlopen for the exit).
    time.sleep(1.5)
    for t in (p, bt):
        t.send_signal(signal.SIGINT)
    tout, terr = p.communicate(timeout=60)
    bout, berr = bt.communicate(timeout=60)
    prog.p.kill()
    prog.wait()
    btv = bt_values(bout)
    pkv = {name: {as_bpftrace(name, a) for a in args} for name, args in hits_by_probe(json_lines(tout)).items()}
    expect("PKREADY" in first, f"bpftrace attached ({berr.strip()[-300:]})")
    for name in C_PROBES:
        expect(btv.get(name) and btv.get(name) == pkv.get(name),
               f"{b.variant.name}: bpftrace and probekit trace print the same {PROVIDER}:{name} values in the same run "
               f"({btv.get(name)} / {pkv.get(name)})")


def gate_external(pid):
    out = run([PROBEKIT, "list", "-p", str(pid), "--format", "json"], check=True).stdout
    doc = json.loads(out)
    for obj in doc["objects"] if isinstance(doc, dict) else doc:
        for p in obj["probes"]:
            if p["name"] == "gated":
                return (p.get("gate") or {}).get("external")
    return None


def check_gate(b):
    v = b.variant
    # Alone, the gated form never builds its argument.
    r = run([b.prog, "gate", "5", "0"])
    expect(gated_runs(r.stdout) == 0, f"{v.name}: with nobody attached the builder never runs")
    n_iter, delay = 150, 20   # 3 s
    prog = Running([b.prog, "gate", str(n_iter), str(delay)])
    time.sleep(0.3)
    before = gate_external(prog.p.pid)
    p, _ = start_trace(["-p", str(prog.p.pid), "--format", "json", f"{PROVIDER}:gated"])
    during = gate_external(prog.p.pid)
    time.sleep(0.8)
    p.send_signal(signal.SIGINT)
    tout, terr = p.communicate(timeout=60)
    after = gate_external(prog.p.pid)
    out, _, _ = prog.wait()
    n = gated_runs(out)
    seen = [a[0] for a in hits_by_probe(json_lines(tout)).get("gated", [])]
    summ = [d for d in json_lines(tout) if d.get("type") == "summary"]
    expect(before == 0 and during == 1 and after == 0,
           f"{v.name}: the semaphore is 0, 1 while trace runs, 0 after Ctrl-C ({before}, {during}, {after})")
    # The program has one thread and the probe one site: trace's one event
    # for it (cpu -1) records every hit from the end of the perf_event_open
    # that opened the gate, wherever the thread runs, and samples until it
    # is closed (docs/cli.md). Unseen can be: at the start, a build racing
    # the microseconds between the uprobe's install and the event's (not
    # seen in practice); at the end, the one build whose hit makes the
    # kernel remove the breakpoint and close the gate, which it does at the
    # first hit after the event is closed, not at the close (seen on 6.18
    # in almost every run). So at most one at each end; everything else is
    # seen, in order, none lost.
    contiguous = bool(seen) and seen == list(range(seen[0], seen[0] + len(seen)))
    expect(n and 0 < n < n_iter and contiguous and n - 2 <= len(seen) <= n and summ and summ[-1]["lost"] == 0,
           f"{v.name}: the builder ran only while trace was attached, and trace saw the values it built, in order "
           f"(gated_runs={n} of {n_iter}; trace saw {len(seen)}: {seen[:2]}..{seen[-1:]})")
    expect(all(GATE_BASE <= x < GATE_BASE + n_iter for x in seen), "the gated values are the program's")
    expect(summ and summ[-1]["ended"] == "signal", f"Ctrl-C ends trace with a summary ({summ[-1:]})")
    expect(f"probekit_{p.pid}" not in trace_groups(), f"Ctrl-C: trace deleted its tracefs events ({trace_groups()})")

    # SIGKILL: the kernel closes the gate when trace's fds go.
    prog = Running([b.prog, "gate", str(n_iter), str(delay)])
    time.sleep(0.3)
    p, _ = start_trace(["-p", str(prog.p.pid), f"{PROVIDER}:gated"])
    during = gate_external(prog.p.pid)
    p.kill()
    p.wait()
    time.sleep(0.1)
    after = gate_external(prog.p.pid)
    # Its tracefs events stay defined (nothing runs to delete them; they
    # hold no breakpoint and no gate): the next trace deletes them.
    left = f"probekit_{p.pid}" in trace_groups()
    r = trace(["-p", str(prog.p.pid), "--duration", "0.2", f"{PROVIDER}:gated"])
    expect(left and f"probekit_{p.pid}" not in trace_groups() and "left in tracefs by trace processes that were killed"
           in r.stderr, f"{v.name}: a SIGKILLed trace's events are deleted by the next trace (left: {left}; "
           f"{r.stderr.strip()[-300:]}; now {trace_groups()})")
    r0 = run_gated_runs_now(prog)
    expect(during == 1 and after == 0, f"{v.name}: trace killed with SIGKILL: the semaphore returns to 0 ({during}, {after})")
    expect(r0 is not None, f"{v.name}: the program ran on after trace was killed (gated_runs={r0})")


def run_gated_runs_now(prog):
    out, _, rc = prog.wait()
    return gated_runs(out) if rc == 0 else None


def check_count(b):
    r = trace(["-c", f"{b.prog} fire 4 0", "--count", f"{PROVIDER}:*"])
    rows = dict(re.findall(r"^ck:(\w+)\s+(\d+)$", r.stdout, re.M))
    want = {n: "4" for n in C_PROBES} | {"gated": "0"}
    expect(r.returncode == 0 and {k: rows.get(k) for k in want} == want and "lost 0" in r.stdout,
           f"--count: a table of 4 hits per probe, 0 for ck:gated ({rows}; {r.stderr.strip()[-300:]})")
    r = trace(["-c", f"{b.prog} fire 2 0", "--count", "--format", "json", f"{PROVIDER}:ints", "wide"])
    docs = [d for d in json_lines(r.stdout) if d.get("type") == "count"]
    got = {p["probe"]: p["hits"] for p in docs[0]["probes"]} if docs else {}
    expect(got == {"ints": 2, "wide": 2} and docs[0]["command_status"] == 0,
           f"--count --format json: hits per probe and the command's status ({docs})")


def check_lost(b):
    """A one-page buffer and 4000 hits in a tight loop: whatever is lost is
    reported, and hits + lost is exactly what was fired."""
    fired = 4000
    r = trace(["-c", f"{b.prog} fire {fired} 0", "--format", "json", "--buffer-pages", "1", f"{PROVIDER}:ints"])
    docs = json_lines(r.stdout)
    hits = len([d for d in docs if d.get("type") == "hit"])
    lost = sum(d["count"] for d in docs if d.get("type") == "lost")
    summ = [d for d in docs if d.get("type") == "summary"]
    expect(summ and summ[-1]["lost"] == lost and summ[-1]["hits"] == hits and hits + lost == fired,
           f"lost events are reported: {hits} hits + {lost} lost = {fired} fired ({summ[-1:]})")
    if lost == 0:
        print("note: nothing was lost with a one-page buffer this time (trace kept up)")


def check_errors(b):
    r = trace(["-p", "999999999", "ck:*"])
    expect(r.returncode == 1 and "no process with PID 999999999" in r.stderr, f"no such PID ({r.stderr.strip()})")
    r = trace(["-c", f"{b.prog} fire 1 0", "nomatch*"])
    expect(r.returncode == 1 and "no probe matches 'nomatch*'" in r.stderr and "fired" not in r.stdout,
           f"a glob that matches nothing; the command is not run ({r.stderr.strip()})")
    r = trace(["-c", "/bin/true", "ck:*"])
    expect(r.returncode == 1 and "/bin/true has no USDT probes" in r.stderr, f"a binary without probes ({r.stderr.strip()})")
    sleeper = subprocess.Popen(["sleep", "30"])
    r = trace(["-p", str(sleeper.pid)])
    sleeper.kill()
    sleeper.wait()
    expect(r.returncode == 1 and f"process {sleeper.pid} has no USDT probes" in r.stderr,
           f"a process without probes ({r.stderr.strip()})")
    r = trace(["-p", "1", "-c", "true"])
    expect(r.returncode == 2, f"-p with -c is a usage error ({r.returncode})")
    r = trace(["ck:*"])
    expect(r.returncode == 2 and "exactly one of -p" in r.stderr, f"neither -p nor -c is a usage error ({r.stderr.strip()})")
    r = trace(["-c", "/bin/true", "--buffer-pages", "3"])
    expect(r.returncode == 2 and "--buffer-pages 3: must be a power of two" in r.stderr,
           f"--buffer-pages not a power of two is a usage error ({r.stderr.strip()})")
    r = trace(["-c", "/nonexistent/prog"])
    expect(r.returncode == 1 and "/nonexistent/prog" in r.stderr, f"-c with a missing program ({r.stderr.strip()})")
    if os.access(PROBEKIT, os.X_OK) and subprocess.run(["which", "setpriv"], capture_output=True).returncode == 0:
        r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", PROBEKIT, "trace",
                 "-p", "1"])
        if "Permission denied" in r.stderr and "trace" not in r.stderr:
            print(f"note: user nobody cannot run {PROBEKIT}; the no-privilege check is skipped")
        else:
            expect(r.returncode == 1 and "needs root, or CAP_PERFMON" in r.stderr and not r.stdout,
                   f"without root: an immediate message naming the capability ({r.stderr.strip()})")
    else:
        print("note: setpriv is missing; the no-privilege check is skipped")


THREADS_D = "provider th { probe tick(int thread, long n); };\n"
THREADS_C = r"""
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include "th.h"
static void nap(long ms) { struct timespec t = { 0, ms * 1000000L }; nanosleep(&t, 0); }
static void *run(void *arg) {
  for (long n = 0; n < 150; n++) { TH_TICK((int)(long)arg, n); nap(10); }
  return 0;
}
int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, run, (void *)1);   /* exists when trace attaches */
  printf("ready\n");
  fflush(stdout);
  nap(700);
  pthread_create(&b, 0, run, (void *)2);   /* started while trace runs */
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
"""


def small_program(subdir, name, spec, source_name, source, compiler):
    """Compiles spec into NAME.h and builds source with it; the executable's path."""
    d = builder.root + "/" + subdir
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/{name}.d", "w") as f:
        f.write(spec)
    with open(f"{d}/{source_name}", "w") as f:
        f.write(source)
    run([PROBEKIT, "compile", f"{d}/{name}.d", "-o", f"{d}/{name}.h"], check=True)
    run(compiler + ["-I", d, f"{d}/{source_name}", "-o", f"{d}/{name}"], check=True)
    return f"{d}/{name}"


def check_threads():
    """Threads that exist when trace attaches and threads started later
    are both traced, each hit with its own thread id; the program's
    pthread_create still works under trace."""
    exe = small_program("threads", "th", THREADS_D, "th.c", THREADS_C, ["gcc", "-O2", "-pthread"])
    prog = subprocess.Popen([exe], stdout=subprocess.PIPE, text=True)
    prog.stdout.readline()
    p, _ = start_trace(["-p", str(prog.pid), "--format", "json", "th:tick"])
    prog.wait(timeout=60)
    tout, terr = p.communicate(timeout=60)
    hits = [d for d in json_lines(tout) if d.get("type") == "hit"]
    by_thread = {}
    for h in hits:
        by_thread.setdefault(h["args"]["thread"], set()).add(h["tid"])
    ns = {t: sorted(h["args"]["n"] for h in hits if h["args"]["thread"] == t) for t in (1, 2)}
    expect(prog.returncode == 0 and set(by_thread) == {1, 2} and all(len(v) == 1 for v in by_thread.values())
           and by_thread[1] != by_thread[2],
           f"threads: the existing and the later thread are both traced, each with its own tid ({by_thread})")
    # The later thread is attached on trace's next tick (100 ms): its first
    # hits may be missed, the rest are all there.
    ok2 = ns[2] and ns[2] == list(range(ns[2][0], 150)) and ns[2][0] <= 30
    expect(ok2, f"threads: the later thread's hits from its attachment on ({ns[2][:3]}..{ns[2][-1:]})")


HS_D = "provider hs { probe note(string s, int round); };\n"
HS_CC = r"""
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include "hs.h"
/* Longer than 15 characters: on the heap, not in std::string's inline buffer. */
static std::string text(int i) { return "heap string for round " + std::to_string(i) + " (built)"; }
int main(int argc, char **argv) {
  int n = std::atoi(argv[1]), built = 0;
  struct timespec nap = { 0, std::atoi(argv[2]) * 1000000L };
  std::printf("ready\n");
  std::fflush(stdout);
  for (int i = 0; i < n; i++) {
    HS_NOTE_GATED([&] { built++; return text(i); }, i);
    /* The builder's string is freed once the probe has fired; reuse its
       block at once with other bytes, as a busy program would. */
    std::string other(40, 'x');
    asm volatile("" : : "r"(other.data()) : "memory");
    nanosleep(&nap, 0);
  }
  std::printf("built=%d\n", built);
  return 0;
}
"""


def check_heap_strings():
    """A gated probe whose builder returns a heap std::string: the kernel
    copies it at the hit; trace prints exactly each round's string, and
    bpftrace attached to the same run prints the same ones."""
    exe = small_program("heapstr", "hs", HS_D, "hs.cc", HS_CC, ["g++", "-std=c++17", "-O2"])
    prog = subprocess.Popen([exe, "150", "10"], stdout=subprocess.PIPE, text=True)
    prog.stdout.readline()
    need_bpftrace()
    bt, first = start_bpftrace(prog.pid, f'usdt:{exe}:hs:note {{ printf("HS\\t%d\\t%s\\n", arg1, str(arg0)); }}')
    p, _ = start_trace(["-p", str(prog.pid), "--format", "json", "hs:note"])
    time.sleep(0.6)
    p.send_signal(signal.SIGINT)   # trace stops first: its rounds are all in bpftrace's
    tout, terr = p.communicate(timeout=60)
    bt.send_signal(signal.SIGINT)
    bout, berr = bt.communicate(timeout=60)
    prog.kill()
    prog.wait()
    pk = [(h["args"]["round"], h["args"]["s"]) for h in json_lines(tout) if h.get("type") == "hit"]
    bts = {(int(m.group(1)), m.group(2)) for m in re.finditer(r"^HS\t(-?\d+)\t(.*)$", bout, re.M)}
    rounds = [r for r, _ in pk]
    wrong = [(r, s) for r, s in pk if s != f"heap string for round {r} (built)"]
    expect(len(pk) >= 20 and not wrong and rounds == list(range(rounds[0], rounds[0] + len(rounds))),
           f"trace prints each round's heap string exactly, copied at the hit ({len(pk)} hits; wrong: {wrong[:3]}; "
           f"{terr.strip()[-300:]})")
    expect("PKREADY" in first and set(pk) <= bts,
           f"bpftrace in the same run prints the same strings ({sorted(set(pk) - bts)[:3]} missing from bpftrace's "
           f"{len(bts)}; {berr.strip()[-300:]})")


def get(variant):
    b = builds[variant]
    return b if builder.check_built(b) else None


for v in variants:
    b = get(v)
    if b and v.kind != "dlopen":
        check_values_c(b)
b = get(Variant("c", "gcc", "-O2", kind="dlopen"))
if b:
    check_pid_dlopen(b)
check_threads()
b = get(Variant("c", "gcc", "-O2"))
if b:
    check_text(b)
    check_uprobe_pmu(b)
    check_count(b)
    check_lost(b)
    check_errors(b)
    check_gate(b)
b = get(Variant("c++", "gcc", "-O2", kind="shared"))
if b:
    check_gate(b)
b = get(Variant("c", "gcc", "-O0"))
if b:
    check_same_run_as_bpftrace(b)
check_heap_strings()
# (Groups of traces still running, another user's, are theirs.)
ended = {g for g in trace_groups() if not os.path.exists(f"/proc/{g.split('_')[1]}")}
expect(not ended, f"no trace leaves events in tracefs when it ends normally ({ended})")

timer.done()
finish()
