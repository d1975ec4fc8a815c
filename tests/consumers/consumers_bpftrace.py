"""bpftrace: attaches to probekit's probes for real (uprobes) and reads the
exact values the program passed; keeps the gate open while attached.

- `bpftrace -l 'usdt:ELF:*'` lists every probe;
- one script attaching ints, misc (str() of both strings), floats (bits),
  sources, twelve, wide (and the COMDAT sites in C++) prints exactly the
  values fired, for gcc -O2 C++, clang -O0 C, the shared library (linked and
  dlopen'ed) and LTO;
- the gate: with nobody attached the gated form never builds its argument;
  while bpftrace is attached to ck:gated the kernel raises the semaphore (the
  uprobe's ref_ctr_offset) so the argument is built, and every value bpftrace
  prints is the one built; after bpftrace exits, the gate is closed again.

bpftrace 0.17 quirks this works around:
- it reads arg0..arg5 only: `arg6` and above fail with "x86_64 doesn't
  support argN" (so ints is checked up to f, twelve up to its sixth argument,
  and ck:wide carries the 64-bit extremes within the first three);
- str() of a string in a page the process has not touched reads as empty:
  the program touches both strings before firing;
- one script attaching several usdt probes with -c can miss the first hits of
  some: the program fires every probe in 5 rounds, sleeping before each, and
  the test wants at least one hit per probe and exact values in all of them;
- with -c it looks the probes of a shared library up in the child before the
  child has loaded it ("Error finding location for probe"): for probes in a
  library (linked or dlopen'ed) the test starts bpftrace without -c, waits
  until its BEGIN probe has printed (all probes attached), runs the program,
  then stops bpftrace with SIGINT;
- it complains about RLIMIT_MEMLOCK, harmlessly.

The gate is also checked with each linker, since the kernel finds the
semaphore from its file offset (ref_ctr_offset): see check_gate.
"""
import os
import re

from consumer_common import (Builder, bpftrace_clause, Elf, Timer, Variant, attach_then_run, expect, finish, gated_runs, need_bpftrace,
                             notes, run, run_prog, COMDAT_FROM_LIB, COMDAT_FROM_MAIN, GATE_BASE, PROVIDER,
                             STRING_ARGS, VALUES)

need_bpftrace()

timer = Timer("bpftrace")
MAX_ARGS = 6      # bpftrace 0.17: arg0..arg5
ROUNDS, DELAY_MS = 5, 200
GATE_N, GATE_DELAY_MS = 40, 50

variants = ([Variant("c++", "gcc", "-O2"), Variant("c", "clang", "-O0"),
             Variant("c++", "gcc", "-O2", kind="shared"), Variant("c", "gcc", "-O2", kind="dlopen"),
             Variant("c++", "gcc", "-O2", cflags=("-flto",), tag="lto"),
             Variant("c", "clang", "-O2", cflags=("-flto",), linker="lld", tag="lto")]
            + [Variant("c++", "gcc", "-O2", linker=ld) for ld in ("bfd", "gold", "lld", "mold")])
builder = Builder("bpftrace")
builds = builder.build(variants)


def parse_hits(text):
    hits = {}
    for line in text.splitlines():
        if line.startswith("PKHIT\t"):
            parts = line.split("\t")[1:]
            name, vals = parts[0], parts[1:]
            out = []
            for i, x in enumerate(vals):
                if (name, i) in STRING_ARGS:
                    out.append(x)
                else:
                    try:
                        out.append(int(x))
                    except ValueError:
                        out.append(x)
            hits.setdefault(name, []).append(out)
    return hits


def bpftrace(b, script, mode, count, delay):
    """Runs the program under bpftrace; returns (bpftrace's output with the
    program's, bpftrace's stderr, bpftrace's exit status)."""
    argv = f"{b.prog} {mode} {count} {delay}"
    if not b.lib:
        r = run(["bpftrace", "-e", script, "-c", argv], timeout=300)
        return r.stdout, r.stderr, r.returncode
    # Probes in a library: attach first (all processes), then run.
    out, err, bt_rc, prog = attach_then_run(["bpftrace", "-e", 'BEGIN { printf("PKREADY\\n"); }\n' + script],
                                            argv.split())
    text = out + (prog.stdout if prog else "")
    rc = bt_rc if prog is None else (prog.returncode or 0)
    return text, err + (prog.stderr if prog else "\nbpftrace never attached"), rc

def check_listing(b):
    for elf, want in b.elfs.items():
        if not want:
            continue
        r = run(["bpftrace", "-l", f"usdt:{elf}:*"], timeout=120)
        got = sorted({m.group(1) for m in re.finditer(rf"^usdt:{re.escape(elf)}:{PROVIDER}:(\S+)$", r.stdout, re.M)})
        expect(got == sorted(want), f"{b.variant.name}: bpftrace -l lists {got} in {os.path.basename(elf)}")


def check_values(b):
    v = b.variant
    clauses = []
    for elf, want in b.elfs.items():
        for name in want:
            if name in VALUES or name == "comdat":
                clauses.append(bpftrace_clause(elf, name, max_args=MAX_ARGS))
    script = "\n".join(clauses)
    out, err, rc = bpftrace(b, script, "fire", ROUNDS, DELAY_MS)
    hits = parse_hits(out)
    ok = rc == 0 and f"fired {ROUNDS}" in out
    expect(ok, f"{v.name}: bpftrace attached and ran the program (exit {rc})" + ("" if ok else f"\n{err.strip()[-1500:]}"))
    for name, want in VALUES.items():
        want = want[:MAX_ARGS]
        got = hits.get(name, [])
        bad = [h for h in got if h != want]
        expect(got and not bad, f"{v.name}: bpftrace reads {PROVIDER}:{name} as {want} "
               f"({len(got)} of {ROUNDS} hits" + (f"; wrong: {bad[:2]})" if bad else ")"))
    if v.lang == "c++":
        want = COMDAT_FROM_MAIN | COMDAT_FROM_LIB
        got = [tuple(h) for h in hits.get("comdat", [])]
        bad = [h for h in got if h not in want]
        expect(got and not bad, f"{v.name}: bpftrace reads the COMDAT sites' values ({len(got)} hits, "
               f"{sorted(set(got))})" + (f"; wrong: {bad[:3]}" if bad else ""))


def check_gate(b):
    v = b.variant
    r = run_prog(b, "gate", 5)
    expect(gated_runs(r.stdout) == 0, f"{v.name}: before bpftrace attaches the gated argument is never built "
           f"(gated_runs={gated_runs(r.stdout)})")
    elf = b.lib or b.prog
    script = f'usdt:{elf}:{PROVIDER}:gated {{ printf("PKHIT\\tgated\\t%ld\\n", arg0); }}'
    out, err, rc = bpftrace(b, script, "gate", GATE_N, GATE_DELAY_MS)
    n = gated_runs(out)
    got = [h[0] for h in parse_hits(out).get("gated", [])]
    # The kernel raises the semaphore through the uprobe's ref_ctr_offset, a
    # file offset: it increments the word at that offset in the first
    # writable mapping of the file that covers it. If .probes shares a file
    # page with the RELRO segment (lld and mold put the two writable PT_LOADs
    # in adjacent, overlapping file pages), that is the RELRO mapping, still
    # writable when the loader maps it, and the real semaphore stays 0.
    expect(n is not None and n > 0, f"{v.name}: while bpftrace is attached to {PROVIDER}:gated the gated argument "
           f"is built (gated_runs={n} of {GATE_N})" + ("" if n else f"\n{err.strip()[-1500:]}" + sem_layout(b)))
    valid = all(GATE_BASE <= x < GATE_BASE + GATE_N for x in got) and got == sorted(set(got))
    expect(got and valid and len(got) == n,
           f"{v.name}: bpftrace sees every built value of {PROVIDER}:gated, exactly ({len(got)} hits for "
           f"gated_runs={n}: {got[:3]}...{got[-2:]})")
    r = run_prog(b, "gate", 5)
    expect(gated_runs(r.stdout) == 0, f"{v.name}: after bpftrace detaches the gate is closed again "
           f"(gated_runs={gated_runs(r.stdout)})")


def sem_layout(b):
    """Where the gated semaphore is, and the writable segments around it."""
    elf_path = b.lib or b.prog
    sems = [n.semaphore for n in notes(elf_path) if n.name == "gated"]
    r = run(["readelf", "-lW", elf_path])
    loads = [l.strip() for l in r.stdout.splitlines()
             if l.strip().startswith("GNU_RELRO") or (l.strip().startswith("LOAD") and " RW " in l)]
    probes = Elf(elf_path).section(".probes")
    where = f"vaddr {probes.addr:#x}, file offset {probes.offset:#x}" if probes else "missing"
    return (f"\n  semaphore {[hex(s) for s in sems]}; .probes at {where}; writable segments:\n    "
            + "\n    ".join(loads))


for v in variants:
    b = builds[v]
    if not builder.check_built(b):
        continue
    check_listing(b)
    check_values(b)
    check_gate(b)

timer.done()
finish()
