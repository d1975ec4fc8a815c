"""readelf: the .note.stapsdt entries of probekit's markers, in every build
configuration, against the same programs built with <sys/sdt.h>.

Per variant and per ELF file (executable, shared library):
- every probe of provider ck is there, with its argument count, and nothing else;
- the size/sign prefix of every argument ([-]N@) is the spec's, and the same
  as <sys/sdt.h> writes for the same program. The operands after `@` may
  differ: probekit's marker takes "nr" operands (a register or an immediate)
  where sys/sdt.h takes "nor", so sys/sdt.h may name memory (`sym(%rip)`,
  `%fs:`), which probekit never does;
- no operand names memory relative to %rip or %fs, or an %xmm register, and no
  argument is declared a float (`f@`): floats travel as their bits;
- every note's Base is the address of .stapsdt.base (all linkers, with and
  without --gc-sections), its semaphore lies in .probes, and its location
  is a NOP in an executable section (for COMDAT sites too: the notes of the
  discarded copies are gone);
- the program runs, and with nobody attached the gated form never builds its
  argument.
"""
import re

from consumer_common import (Builder, Elf, Timer, core_variants, expect, finish, gated_runs, is_nop_site,
                             linker_variants, lto_variants, need, nopie_variants, notes, run_prog,
                             shared_variants, static_variants, PREFIXES, PROVIDER)

need("readelf")
timer = Timer("readelf")

FORBIDDEN = re.compile(r"\(%rip\)|%fs:|(^|\s)f\d*@|%xmm")

variants = (core_variants() + nopie_variants() + shared_variants() + lto_variants() + linker_variants()
            + static_variants())
builder = Builder("readelf")
builds = builder.build(variants + [v.sdt() for v in variants])

contrast = []  # sys/sdt.h operands that name memory


def by_probe(ns):
    out = {}
    for n in ns:
        if n.provider == PROVIDER:
            out.setdefault(n.name, []).append(n)
    return out


def check_file(v, path, ref_path, want):
    label = f"{v.name}: {path.rsplit('/', 1)[-1]}"
    elf = Elf(path)
    all_notes = notes(path)
    mine = by_probe(all_notes)
    expect(sorted(mine) == sorted(want), f"{label}: probes {sorted(mine)} (want {sorted(want)})")

    ref = by_probe(notes(ref_path)) if ref_path else {}
    for name, ns in sorted(mine.items()):
        want_prefixes = PREFIXES.get(name)
        got = sorted({tuple(n.prefixes) for n in ns})
        expect(got == [tuple(want_prefixes)],
               f"{label}: {PROVIDER}:{name} has {len(want_prefixes)} arguments sized {' '.join(want_prefixes)}"
               + ("" if got == [tuple(want_prefixes)] else f" (got {got})"))
        if ref_path:
            ref_got = sorted({tuple(n.prefixes) for n in ref.get(name, [])})
            expect(ref_got == got, f"{label}: {PROVIDER}:{name} prefixes equal sys/sdt.h's"
                   + ("" if ref_got == got else f" (probekit {got}, sys/sdt.h {ref_got})"))
            for n in ref.get(name, []):
                bad = [a for a in n.args if FORBIDDEN.search(a)]
                if bad:
                    contrast.append(f"{v.name}: sys/sdt.h {PROVIDER}:{name}: {' '.join(bad)}")
        bad = [a for n in ns for a in n.args if FORBIDDEN.search(a)]
        expect(not bad, f"{label}: {PROVIDER}:{name} operands are registers or immediates"
               + ("" if not bad else f" (got {bad})"))

    if not all_notes:
        return
    base = elf.section(".stapsdt.base")
    expect(base is not None, f"{label}: has a .stapsdt.base section")
    if base is not None:
        bases = sorted({n.base for n in all_notes})
        expect(bases == [base.addr], f"{label}: every note's Base is .stapsdt.base ({base.addr:#x})"
               + ("" if bases == [base.addr] else f" (got {[hex(b) for b in bases]})"))
    probes = elf.section(".probes")
    mine_all = [n for ns in mine.values() for n in ns]
    if mine_all:
        expect(probes is not None, f"{label}: has a .probes section")
    if probes is not None:
        outside = sorted({(n.name, hex(n.semaphore)) for n in mine_all
                          if not (probes.contains(n.semaphore) and n.semaphore % 4 == 0)})
        expect(not outside, f"{label}: every semaphore lies in .probes "
               f"[{probes.addr:#x}, {probes.addr + probes.size:#x})" + ("" if not outside else f" (not: {outside})"))
    not_code = sorted({(n.name, hex(n.location)) for n in mine_all if not is_nop_site(elf, n.location)})
    expect(not not_code, f"{label}: every location is a NOP in executable code"
           + ("" if not not_code else f" (not: {not_code})"))
    if "comdat" in want:
        sites = {n.location for n in mine.get("comdat", [])}
        expect(len(mine.get("comdat", [])) == 2 and len(sites) == 2,
               f"{label}: COMDAT: one ck:comdat note per kept copy (ck_tmpl<1>, ck_inl), got "
               f"{[hex(s) for s in sorted(sites)]}")


for v in variants:
    b = builds[v]
    if not builder.check_built(b):
        continue
    ref = builds[v.sdt()]
    if not builder.check_built(ref):
        ref = None

    r = run_prog(b, "fire", 2)
    expect(r.returncode == 0 and "fired 2" in r.stdout, f"{v.name}: runs ({r.returncode}: {r.stderr.strip()[:300]})")
    r = run_prog(b, "gate", 5)
    n = gated_runs(r.stdout)
    expect(n == 0, f"{v.name}: with nobody attached the gated argument is never built (gated_runs={n})")

    for path, want in b.elfs.items():
        ref_path = None
        if ref is not None:
            ref_path = path.replace(b.dir, ref.dir)
        check_file(v, path, ref_path, want)

if contrast:
    print("contrast: <sys/sdt.h> wrote memory operands for the same programs (probekit never does):")
    for c in contrast[:20]:
        print("  " + c)
    if len(contrast) > 20:
        print(f"  ... and {len(contrast) - 20} more")
else:
    print("contrast: <sys/sdt.h> wrote no memory operands in these builds")

timer.done()
finish()
