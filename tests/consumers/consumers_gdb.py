"""gdb: `info probes` lists every probe of provider ck with its semaphore,
`break -probe-stap ck:NAME` stops at every site and `$_probe_argN` reads
exactly the values the program passed (negative, 8/16/32/64-bit, the pointer,
the string's bytes, the floats' bits, all twelve arguments), in programs built
with gcc and clang, as C and C++, at -O0 and -O2, in a shared library (linked
and dlopen'ed, pending breakpoints), with LTO, with every linker and
--gc-sections, -no-pie and -static. While the ck:gated breakpoint exists gdb
holds the semaphore up, so the gated form builds its argument every time.

The breakpoints are gdb.Breakpoint objects whose stop() reads every argument
on its own and resumes: a probe (or an argument) gdb cannot read is reported
as that probe's failure without stopping the run or hiding the others. (gdb
parses all of a probe's arguments before reading any, so one operand it
cannot parse makes $_probe_argc and every $_probe_argN of that probe fail.)
"""
import json
import os
import re

from consumer_common import (Builder, Timer, core_variants, expect, finish, gated_runs, linker_variants,
                             lto_variants, need, nopie_variants, parallel, run, shared_variants, skip,
                             static_variants, COMDAT_FROM_LIB, COMDAT_FROM_MAIN, GATE_BASE, PREFIXES,
                             PROVIDER, STRING_ARGS, VALUES)

need("gdb")
need("readelf")
timer = Timer("gdb")

if run(["gdb", "-nx", "-batch", "-ex", "python print('py-ok')"]).stdout.strip() != "py-ok":
    skip("this gdb has no Python support")

GATE_N = 3

# Every compiler x -O0/-O2 x C/C++, the shared library (linked, dlopen'ed),
# LTO, each linker with --gc-sections, -no-pie, -static.
variants = ([v for v in core_variants() if v.opt in ("-O0", "-O2")] + shared_variants() + lto_variants()
            + [v for v in linker_variants(gc_only=True) if v.lang == "c++"] + nopie_variants() + static_variants())
builder = Builder("gdb")
builds = builder.build(variants)

GDB_PY = r'''
import json
import gdb

PROBES = json.loads(%(probes)r)
STRINGS = set(tuple(x) for x in json.loads(%(strings)r))


def read(name, i):
    try:
        if (name, i) in STRINGS:
            return gdb.parse_and_eval("(const char *)$_probe_arg%%d" %% i).string()
        return int(gdb.parse_and_eval("$_probe_arg%%d" %% i))
    except Exception as e:  # one unreadable argument must not hide the others
        return "ERROR: %%s" %% (str(e).splitlines() or ["?"])[0]


class ProbeBreak(gdb.Breakpoint):
    def __init__(self, name):
        super().__init__("-probe-stap %(provider)s:" + name)
        self.probe = name

    def stop(self):
        try:
            argc = int(gdb.parse_and_eval("$_probe_argc"))
        except Exception as e:
            argc = "ERROR: %%s" %% str(e).splitlines()[0]
        vals = [read(self.probe, i) for i in range(argc)] if isinstance(argc, int) else []
        gdb.write("PKHIT " + json.dumps([self.probe, argc, vals]) + "\n")
        return False


gdb.execute("set pagination off")
gdb.execute("set breakpoint pending on")
gdb.execute("set startup-with-shell off")
for p in PROBES:
    ProbeBreak(p)
'''


def run_gdb(b):
    v = b.variant
    script = os.path.join(b.dir, "probes.py")
    with open(script, "w") as f:
        f.write(GDB_PY % {"probes": json.dumps(v.probes()), "strings": json.dumps(sorted(STRING_ARGS)),
                          "provider": PROVIDER})
    argv = ["gdb", "-nx", "-batch", "-x", script, "-ex", "run fire 1 0", "-ex", f"run gate {GATE_N} 0", b.prog]
    return run(argv, timeout=300)


def run_info_probes(path):
    return run(["gdb", "-nx", "-batch", "-ex", "info probes stap", path], timeout=120)


INFO_RE = re.compile(r"^stap\s+(\S+)\s+(\S+)\s+(0x[0-9a-f]+)\s+(?:(0x[0-9a-f]+)\s+)?(\S+)\s*$", re.M)


def check_info_probes(v, path, want, out):
    label = f"{v.name}: {os.path.basename(path)}"
    rows = [m for m in INFO_RE.finditer(out) if m.group(1) == PROVIDER]
    names = sorted({m.group(2) for m in rows})
    expect(names == sorted(want), f"{label}: gdb info probes lists {names} (want {sorted(want)})")
    nosem = sorted({m.group(2) for m in rows if not m.group(4) or int(m.group(4), 16) == 0})
    expect(rows and not nosem, f"{label}: gdb info probes shows a non-zero semaphore for every probe"
           + ("" if not nosem else f" (not for {nosem})"))


def check_hits(b, r):
    v = b.variant
    out = r.stdout
    hits = {}
    for line in out.splitlines():
        if line.startswith("PKHIT "):
            name, argc, vals = json.loads(line[6:])
            hits.setdefault(name, []).append((argc, vals))
    # The two runs: `fire 1 0` then `gate 3 0`. Hits of the gate run are the
    # ck:gated ones; everything else comes from the fire run.
    errors = [l for l in (r.stdout + r.stderr).splitlines() if "rror" in l and not l.startswith("PKHIT")]
    expect(len(re.findall(r"exited normally", out)) == 2,
           f"{v.name}: gdb ran the program twice to completion" + ("" if not errors else f" ({errors[:3]})"))
    for name, want in VALUES.items():
        got = hits.get(name, [])
        n = len(PREFIXES[name])
        expect(len(got) == 1, f"{v.name}: gdb stopped once at {PROVIDER}:{name} (got {len(got)})")
        for argc, vals in got:
            ok = argc == n and vals == want
            detail = "" if ok else f": got argc={argc} {vals}, want {want}"
            expect(ok, f"{v.name}: gdb $_probe_argc/$_probe_arg0..{n - 1} of {PROVIDER}:{name} read {want}{detail}")
    if v.lang == "c++":
        got = hits.get("comdat", [])
        pairs = sorted(tuple(vals) for argc, vals in got if argc == 2)
        want = sorted(COMDAT_FROM_MAIN | COMDAT_FROM_LIB) if v.kind != "dlopen" else sorted(COMDAT_FROM_LIB)
        expect(pairs == want and len(got) == len(want),
               f"{v.name}: gdb stops at both COMDAT sites from both units: {pairs} (want {want})")
    got = hits.get("gated", [])
    want = [[1, [GATE_BASE + i]] for i in range(GATE_N)]
    expect([list(h) for h in got] == want, f"{v.name}: gdb reads {PROVIDER}:gated as {[h[1] for h in got]}"
           f" (want {[w[1] for w in want]})")
    n = gated_runs(out)
    expect(n == GATE_N, f"{v.name}: while gdb's probe breakpoint exists the gated argument is built every "
           f"time (gated_runs={n}, want {GATE_N})")


usable = [b for b in builds.values() if builder.check_built(b)]

# info probes, on every ELF file of every variant.
files = [(b, path, want) for b in usable for path, want in b.elfs.items() if want]
for (b, path, want), r in zip(files, parallel(lambda f: run_info_probes(f[1]), files)):
    check_info_probes(b.variant, path, want, r.stdout)

# Breakpoints on every probe; two gdb sessions at a time.
for b, r in zip(usable, parallel(run_gdb, usable)):
    check_hits(b, r)
    if os.environ.get("PROBEKIT_GDB_LOG"):
        print(r.stdout, r.stderr)

timer.done()
finish()
