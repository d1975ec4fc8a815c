#!/usr/bin/env python3
"""The `probekit trace` figure (docs/benchmarks.md, section 6): 2 threads
fire bench:hit (gated form) at 100,000 hits/s in total for SECONDS (default
10), and in the same run, one after the other:

  none      no tracer: the firing threads' CPU time, the baseline;
  trace     probekit trace -p, every hit decoded and printed (text, to
            /dev/null), default buffer; hits and lost from its summary;
  count     probekit trace --count -p (counting events, no ring buffer);
  bpftrace  bpftrace -p counting the same probe (@hits = count()).

The load is held until the tool has attached (a line on its stdin starts
it). Per tool: the target's per-hit overhead (firing-thread CPU time over
the baseline's, divided by the hits) and the tool's own CPU time (user +
system, from the children's rusage), and the ratios against bpftrace.
With ROUNDS > 1 the three tools run ROUNDS times, interleaved (trace,
count, bpftrace, trace, ...), and each figure is the median of its rounds:
on a machine shared with other work the load drifts during a run, and
interleaving spreads the drift over all three tools alike.
Needs root and bpftrace. Usage: bench/trace/run.py BUILD_DIR [SECONDS [ROUNDS]]
"""
import datetime
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "build"))
seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
probekit = os.path.join(build, "probekit")
THREADS, RATE = 2, 100000

w = tempfile.mkdtemp(prefix="probekit-bench-trace-")
with open(f"{w}/bench.d", "w") as f:
    f.write("provider bench { probe hit(long n, long thread); };\n")
subprocess.run([probekit, "compile", f"{w}/bench.d", "-o", f"{w}/bench_probes.h"], check=True)
subprocess.run(["gcc", "-O2", "-pthread", "-I", w, f"{here}/load.c", "-o", f"{w}/load"], check=True)
if not os.path.exists("/sys/kernel/tracing/uprobe_events"):
    subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"])


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one(tool):
    """Runs the load with `tool` attached (None: alone). Returns a dict."""
    load = subprocess.Popen([f"{w}/load", str(THREADS), str(RATE), str(seconds)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert load.stdout.readline().strip() == "ready"
    cpu0 = children_cpu()
    tp = None
    if tool:
        if tool == "bpftrace":
            argv = ["bpftrace", "-p", str(load.pid), "-e",
                    f'BEGIN {{ printf("Ctrl-C to stop\\n"); }} usdt:{w}/load:bench:hit {{ @hits = count(); }}']
            ready_stream = "stdout"
        else:
            argv = [probekit, "trace", "-p", str(load.pid), "bench:hit"] + (["--count"] if tool == "count" else [])
            ready_stream = "stderr"
        out = open(os.devnull, "w") if tool == "trace" else subprocess.PIPE
        tp = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, text=True)
        stream = tp.stdout if ready_stream == "stdout" else tp.stderr
        while True:
            line = stream.readline()
            if not line or "Ctrl-C to stop" in line:
                break
        time.sleep(0.2)
    load.stdin.write("go\n")
    load.stdin.flush()
    lout, _ = load.communicate()
    m = re.search(r"fired (\d+) cpu ([\d.]+) wall ([\d.]+)", lout)
    row = {"fired": int(m.group(1)), "target_cpu": float(m.group(2)), "wall": float(m.group(3))}
    if tp:
        if tool == "bpftrace":
            tp.send_signal(signal.SIGINT)
        tout, terr = tp.communicate(timeout=120)
        row["tool_cpu"] = children_cpu() - cpu0
        text = (tout or "") + (terr or "")
        if tool == "trace":
            m = re.search(r"(\d+) hits, (\d+) lost", text)
            row["seen"], row["lost"] = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        elif tool == "count":
            m = re.search(r"^bench:hit\s+(\d+)", text, re.M)
            row["seen"], row["lost"] = (int(m.group(1)) if m else None), 0
        else:
            m = re.search(r"@hits: (\d+)", text)
            row["seen"], row["lost"] = (int(m.group(1)) if m else None), None
    return row


runs = {"none": [one(None)]}
for _ in range(rounds):
    for t in ("trace", "count", "bpftrace"):
        runs.setdefault(t, []).append(one(t))
base = runs["none"][0]["target_cpu"] / runs["none"][0]["fired"]
for rs in runs.values():
    for r in rs:
        r["ns_per_hit"] = (r["target_cpu"] / r["fired"] - base) * 1e9
        r["tool_pct"] = 100.0 * r.get("tool_cpu", 0.0) / r["wall"]


def median_run(rs):
    """The run with the median overhead (its other figures with it)."""
    return sorted(rs, key=lambda r: r["ns_per_hit"])[len(rs) // 2]


rows = {name: median_run(rs) for name, rs in runs.items()}
bt = rows["bpftrace"]
print(f"# probekit trace figure, {datetime.date.today()}, {os.uname().release}, {os.cpu_count()} cores (shared, loaded)")
print(f"# {THREADS} threads, {RATE} hits/s in total, {seconds} s per run; overhead = firing-thread CPU over the untraced run")
if rounds > 1:
    print(f"# median of {rounds} interleaved rounds; every round's ns/hit: " +
          "; ".join(f"{t} " + " ".join(f"{r['ns_per_hit']:.0f}" for r in runs[t]) for t in ("trace", "count", "bpftrace")))
print(f"{'tool':10} {'fired':>9} {'seen':>9} {'lost':>6} {'ns/hit':>8} {'x bpftrace':>10} {'tool CPU %':>10} {'x bpftrace':>10}")
for name, r in rows.items():
    if name == "none":
        print(f"{name:10} {r['fired']:9d} {'':>9} {'':>6} {0:8.0f} {'':>10} {'':>10} {'':>10}")
        continue
    print(f"{name:10} {r['fired']:9d} {str(r['seen']):>9} {str(r['lost']):>6} {r['ns_per_hit']:8.0f} "
          f"{r['ns_per_hit'] / bt['ns_per_hit']:10.2f} {r['tool_pct']:10.1f} {r['tool_pct'] / bt['tool_pct']:10.2f}")
