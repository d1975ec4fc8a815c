"""`probekit compile --format bpftrace`: the generated script, run by bpftrace
as is (plus a BEGIN clause that says when every probe is attached), prints
every probe of a real program with each argument named and the exact value
fired: integers of each width and sign, strings as text, a pointer, bools,
the floats' bits, unnamed arguments, a `__` name; for a probe with eight
arguments, the six bpftrace 0.17 reads and `...`.

Pattern of consumers_bpftrace.py: bpftrace is started first and the program
only once BEGIN has printed (one script attaching several usdt probes with
-c can miss the first hits of some); the program fires every probe in three
rounds and each probe must be seen, with exact values every time.
"""
import os
import signal
import subprocess
import threading
import time

from script_program import EXPECTED_BPFTRACE, build, generate
from common import expect, finish, need, run, skip

need("bpftrace")
need("gcc")
if os.geteuid() != 0:
    skip("bpftrace needs root to attach uprobes")
TRACEFS = "/sys/kernel/tracing"
if not os.path.exists(os.path.join(TRACEFS, "uprobe_events")):
    r = run(["mount", "-t", "tracefs", "nodev", TRACEFS])
    if not os.path.exists(os.path.join(TRACEFS, "uprobe_events")):
        skip(f"tracefs is not mounted at {TRACEFS} and mounting it failed: {r.stderr.strip()}")
smoke = run(["bpftrace", "-e", 'BEGIN { printf("pk-smoke-ok\\n"); exit(); }'], timeout=120)
if "pk-smoke-ok" not in smoke.stdout:
    skip(f"bpftrace cannot run BPF programs here: {smoke.stderr.strip()[-500:]}")

ROUNDS = 3
d, prog = build("bpftrace")
script = generate(d, "bpftrace", "--binary", prog)
with open(script, "a") as f:
    f.write('\nBEGIN { printf("PKREADY\\n"); }\n')

bt = subprocess.Popen(["bpftrace", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
out, err, ready = [], [], threading.Event()


def pump(stream, sink, watch):
    for line in stream:
        sink.append(line)
        if watch and line.startswith("PKREADY"):
            ready.set()


threads = [threading.Thread(target=pump, args=(bt.stdout, out, True), daemon=True),
           threading.Thread(target=pump, args=(bt.stderr, err, False), daemon=True)]
for t in threads:
    t.start()
deadline = time.monotonic() + 120
while not ready.is_set() and bt.poll() is None and time.monotonic() < deadline:
    ready.wait(0.1)
p = None
if ready.is_set():
    time.sleep(0.3)
    p = run([prog, str(ROUNDS), "200"], timeout=300)
    time.sleep(0.5)   # let bpftrace print the last events
if bt.poll() is None:
    bt.send_signal(signal.SIGINT)
try:
    bt.wait(timeout=60)
except subprocess.TimeoutExpired:
    bt.kill()
    bt.wait()
for t in threads:
    t.join(timeout=10)

expect(p is not None and f"fired {ROUNDS}" in p.stdout, "bpftrace attached every probe, then the program ran"
       + ("" if p else f"\n{''.join(err)[-1500:]}"))
lines = [l.rstrip("\n") for l in out if l.startswith("sk:")]
for want in EXPECTED_BPFTRACE:
    probe = want.split()[0]
    got = [l for l in lines if l.split()[0] == probe]
    bad = [l for l in got if l != want]
    expect(got and not bad, f"bpftrace prints {want!r} ({len(got)} of {ROUNDS} hits"
           + (f"; wrong: {bad[:2]})" if bad else ")"))
finish()
