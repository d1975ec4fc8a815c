"""SystemTap: `stap -L 'process("ELF").provider("ck").mark("*")'` lists every
mark of probekit's programs and libraries with its argument count
($arg1..$argN), for gcc and clang, C and C++, the shared library, LTO, every
linker with --gc-sections and -static.

stap wants a kernel build tree even to list marks; a stub is enough (see
stub_kernel_tree). Running stap scripts (pass 5) needs a real kernel module
build and is not tested here.
"""
import os
import re

from consumer_common import (Builder, Timer, core_variants, expect, finish, linker_variants, lto_variants,
                             need, parallel, run, shared_variants, skip, static_variants, stub_kernel_tree,
                             PREFIXES, PROVIDER)

need("stap")
timer = Timer("stap")

variants = ([v for v in core_variants() if v.opt == "-O2"] + shared_variants()
            + [v for v in lto_variants() if v.cc == "gcc" and v.lang == "c++"]
            + [v for v in linker_variants(gc_only=True) if v.lang == "c++"]
            + [v for v in static_variants() if v.lang == "c"])
builder = Builder("stap")
kernel = stub_kernel_tree(builder.root)
stapdir = os.path.join(builder.root, "systemtap-home")   # stap's cache, instead of ~/.systemtap
os.makedirs(stapdir)
env = dict(os.environ, SYSTEMTAP_DIR=stapdir)

# Can this stap list anything at all (with the stub tree)?
builds = builder.build(variants)
first = next((b for b in builds.values() if b.ok), None)
if first is None:
    skip("no variant could be built")


def stap_list(path):
    return run(["stap", "-r", kernel, "-L", f'process("{path}").provider("{PROVIDER}").mark("*")'],
               env=env, timeout=300)


probe = stap_list(next(iter(first.elfs)))
if probe.returncode != 0 and "mark(" not in probe.stdout:
    skip(f"stap cannot list marks here, even with a stub kernel tree: {probe.stderr.strip()[-600:]}")

LINE_RE = re.compile(r'^process\("([^"]+)"\)\.provider\("([^"]+)"\)\.mark\("([^"]+)"\)(.*)$', re.M)

files = [(b, path, want) for b in builds.values() if builder.check_built(b) for path, want in b.elfs.items() if want]
for (b, path, want), r in zip(files, parallel(lambda f: stap_list(f[1]), files)):
    label = f"{b.variant.name}: {os.path.basename(path)}"
    marks = {}
    for m in LINE_RE.finditer(r.stdout):
        if m.group(2) == PROVIDER:
            marks[m.group(3)] = [int(a) for a in re.findall(r"\$arg(\d+):", m.group(4))]
    expect(sorted(marks) == sorted(want), f"{label}: stap -L lists marks {sorted(marks)} (want {sorted(want)})"
           + ("" if marks else f"\n{r.stderr.strip()[-800:]}"))
    for name in want:
        n = len(PREFIXES[name])
        got = marks.get(name)
        expect(got == list(range(1, n + 1)), f"{label}: stap -L shows {PROVIDER}:{name} with $arg1..$arg{n}"
               + ("" if got == list(range(1, n + 1)) else f" (got {got})"))

timer.done()
finish()
