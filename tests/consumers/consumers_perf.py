"""perf: after `perf buildid-cache --add ELF`, `perf list sdt` shows every
probe of provider ck as sdt_ck:NAME, for gcc and clang, C and C++, the
shared library, LTO, every linker with --gc-sections and -static. The cache
is a private directory (`perf --buildid-dir`), never ~/.debug.

As root, also for real: `perf probe sdt_ck:NAME` turns each probe into a
uprobe event and `perf record` + `perf script` show the values fired, and
the gated form's argument is built while perf records ck:gated. perf's own
limits, which sys/sdt.h notes share: it skips constant operands ("$42": no
uprobe fetch argument for an immediate), reads a string argument as its
address, and `perf script` prints 8- and 16-bit signed values as unsigned,
so each value is compared modulo 2^(8*size). The events are deleted at the
end (`perf probe -d 'sdt_ck:*'`).
"""
import atexit
import os
import re
from dataclasses import replace

from consumer_common import (Builder, Timer, Variant, core_variants, expect, finish, gated_runs,
                             linker_variants, lto_variants, need, parallel, run, shared_variants,
                             static_variants, COMDAT_FROM_LIB, COMDAT_FROM_MAIN, GATE_BASE, PREFIXES, PROVIDER,
                             STRING_ARGS, VALUES)

need("perf")
need("readelf")
timer = Timer("perf")

# lld's default build ID is 8 bytes ("fast"); perf files it in its cache but
# `perf list sdt` only walks 20-byte IDs and shows nothing. The lld builds
# here ask for a SHA-1 ID; the 8-byte case is reported as a skip.
def sha1_id(v):
    return replace(v, ldflags=v.ldflags + ("-Wl,--build-id=sha1",), tag=(v.tag + " sha1-id").strip()) \
        if v.linker == "lld" else v


variants = ([v for v in core_variants() if v.opt == "-O2"] + shared_variants()
            + [v for v in lto_variants() if v.cc == "gcc" and v.lang == "c++"]
            + [v for v in linker_variants(gc_only=True) if v.lang == "c++"]
            + [v for v in static_variants() if v.lang == "c"])
variants = variants + [sha1_id(v) for v in variants if v.linker == "lld"]
builder = Builder("perf")
builds = builder.build(variants)


def build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", path]).stdout)
    return m.group(1) if m else ""


def perf(cache, *args, timeout=300):
    return run(["perf", "--buildid-dir", cache, *args], timeout=timeout)


def list_sdt(item):
    b, path = item
    cache = os.path.join(b.dir, "perf-cache-" + os.path.basename(path))
    os.makedirs(cache, exist_ok=True)
    add = perf(cache, "buildid-cache", "--add", path)
    return cache, add, perf(cache, "list", "sdt")


# perf list sdt, per ELF file, each with its own cache.
files = [(b, path, want) for b in builds.values() if builder.check_built(b) for path, want in b.elfs.items() if want]
caches = {}
for (b, path, want), (cache, add, r) in zip(files, parallel(lambda f: list_sdt(f[:2]), files)):
    label = f"{b.variant.name}: {os.path.basename(path)}"
    bid = build_id(path)
    if len(bid) != 40:
        print(f"skip: {label}: perf list sdt: " + (f"the build ID {bid} is not 20 bytes; perf list sdt ignores it"
                                                  if bid else "no build ID (perf's cache is keyed by it)"))
        continue
    caches[path] = cache
    expect(add.returncode == 0, f"{label}: perf buildid-cache --add" + ("" if add.returncode == 0 else f": {add.stderr}"))
    got = sorted({m.group(1) for m in re.finditer(rf"\bsdt_{PROVIDER}:(\w+)", r.stdout)})
    expect(got == sorted(want), f"{label}: perf list sdt shows {['sdt_%s:%s' % (PROVIDER, g) for g in got]}"
           + ("" if got == sorted(want) else f" (want {sorted(want)})"))

# For real: uprobe events from the notes, recorded.
if os.geteuid() != 0:
    print("skip: perf probe/record: needs root")
    timer.done()
    finish()

UPROBE_EVENTS = "/sys/kernel/tracing/uprobe_events"
if not os.path.exists(UPROBE_EVENTS):
    run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"])
if not os.path.exists(UPROBE_EVENTS):
    print("skip: perf probe/record: tracefs is not available")
    timer.done()
    finish()


def delete_events():
    run(["perf", "probe", "-q", "-d", f"sdt_{PROVIDER}:*"])


delete_events()
atexit.register(delete_events)

EVENT_RE = re.compile(rf"sdt_{PROVIDER}:(\w+):.*?\)((?:[ \t]+arg\d+=\S+)*)[ \t]*$", re.M)


def record(b, elf, names, mode, count):
    cache = caches[elf]
    delete_events()
    for name in names:
        r = perf(cache, "probe", "-x", elf, "-a", f"sdt_{PROVIDER}:{name}")
        if r.returncode != 0:
            return None, f"perf probe sdt_{PROVIDER}:{name}: {r.stderr.strip()[-500:]}"
    data = os.path.join(b.dir, f"perf-{mode}.data")
    argv = ["record", "-q", "-o", data]
    for name in names:
        argv += ["-e", f"sdt_{PROVIDER}:{name}"]
    r = perf(cache, *argv, "--", b.prog, mode, str(count), "0")
    if r.returncode != 0:
        return None, f"perf record: {r.stderr.strip()[-800:]}"
    s = perf(cache, "script", "-i", data)
    hits = {}
    for m in EVENT_RE.finditer(s.stdout):
        args = {int(k): int(v) for k, v in re.findall(r"arg(\d+)=(-?\d+)", m.group(2))}
        hits.setdefault(m.group(1), []).append(args)
    return hits, r.stdout


def same_bits(got, want, size):
    return (got - want) % (1 << (8 * size)) == 0


record_variants = [Variant("c++", "gcc", "-O2"), Variant("c", "gcc", "-O2"), Variant("c++", "clang", "-O2"),
                   Variant("c", "clang", "-O2"), Variant("c++", "gcc", "-O2", kind="shared")]
for v in record_variants:
    b = builds[v]
    if not b.ok:
        continue
    elf = b.lib or b.prog
    if elf not in caches:
        continue
    names = [n for n in VALUES] + (["comdat"] if v.lang == "c++" and not b.lib else [])
    hits, err = record(b, elf, names, "fire", 1)
    expect(hits is not None, f"{v.name}: perf probe + perf record of every probe" + ("" if hits is not None else f": {err}"))
    if hits is None:
        continue
    for name in VALUES:
        got = hits.get(name, [])
        expect(len(got) == 1, f"{v.name}: perf recorded {PROVIDER}:{name} once (got {len(got)})")
        for args in got:
            bad, checked = [], []
            for k, val in sorted(args.items()):
                i = k - 1
                if (name, i) in STRING_ARGS:
                    continue   # an address
                size = abs(int(PREFIXES[name][i]))
                checked.append(k)
                if not same_bits(val, VALUES[name][i], size):
                    bad.append(f"arg{k}={val} (want {VALUES[name][i]})")
            expect(checked and not bad, f"{v.name}: perf reads {PROVIDER}:{name} arg{checked} exactly"
                   + ("" if not bad else f": {bad}"))
    if "comdat" in names:
        got = sorted(a.get(2) for a in hits.get("comdat", []))
        want = sorted(x for _, x in COMDAT_FROM_MAIN | COMDAT_FROM_LIB)
        expect(got == want, f"{v.name}: perf reads the COMDAT sites' values {got} (want {want})")
    # The gate: perf's uprobe event raises the semaphore too.
    hits, out = record(b, elf, ["gated"], "gate", 5)
    n = gated_runs(out or "")
    got = [a.get(1) for a in (hits or {}).get("gated", [])]
    expect(n == 5 and got == [GATE_BASE + i for i in range(5)],
           f"{v.name}: while perf records {PROVIDER}:gated the gated argument is built (gated_runs={n}, "
           f"values {got})")

delete_events()
timer.done()
finish()
