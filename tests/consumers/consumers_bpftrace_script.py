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
from script_program import EXPECTED_BPFTRACE, build, generate
from consumer_common import attach_then_run, expect, finish, need, need_bpftrace

need("gcc")
need_bpftrace()

ROUNDS = 3
d, prog = build("bpftrace")
script = generate(d, "bpftrace", "--binary", prog)
with open(script, "a") as f:
    f.write('\nBEGIN { printf("PKREADY\\n"); }\n')

out, err, _, p = attach_then_run(["bpftrace", script], [prog, str(ROUNDS), "200"])

expect(p is not None and f"fired {ROUNDS}" in p.stdout, "bpftrace attached every probe, then the program ran"
       + ("" if p else f"\n{err[-1500:]}"))
lines = [l for l in out.splitlines() if l.startswith("sk:")]
for want in EXPECTED_BPFTRACE:
    probe = want.split()[0]
    got = [l for l in lines if l.split()[0] == probe]
    bad = [l for l in got if l != want]
    expect(got and not bad, f"bpftrace prints {want!r} ({len(got)} of {ROUNDS} hits"
           + (f"; wrong: {bad[:2]})" if bad else ")"))
finish()
