#!/usr/bin/env python3
"""Builds small real binaries with probes as seeds for the ELF fuzz target:
an executable, a shared object and an object file, with probekit's marker
and with sys/sdt.h. `make_elf_seeds.py PROBEKIT OUTDIR STAMP`"""
import os
import subprocess
import sys

probekit, outdir, stamp = sys.argv[1:4]
os.makedirs(outdir, exist_ok=True)
spec = os.path.join(outdir, "seed.d")
with open(spec, "w") as f:
    f.write("provider seed { /** doc */ probe a(int x, string s); probe b(); probe g(double d, void *p); };\n")
subprocess.run([probekit, "compile", spec, "-o", os.path.join(outdir, "seed.h")], check=True)
src = os.path.join(outdir, "seed.c")
with open(src, "w") as f:
    f.write('#include <sys/sdt.h>\n#include "seed.h"\nlong g; int main(int c, char **v) {\n'
            '  SEED_A(c, v[0]); SEED_B(); SEED_G_GATED(1.5, v); STAP_PROBE2(raw, p, c, g); return 0; }\n')
for args, name in ((["-O2"], "exe"), (["-O0"], "exe-O0"), (["-O2", "-fPIC", "-shared"], "lib.so"), (["-O1", "-c"], "obj.o")):
    out = os.path.join(outdir, name)
    subprocess.run(["gcc", *args, "-I", outdir, src, "-o", out], check=True)
    subprocess.run(["strip", "--strip-debug", out], check=False)
for leftover in ("seed.d", "seed.h", "seed.c"):
    os.unlink(os.path.join(outdir, leftover))
open(stamp, "w").write("ok\n")
