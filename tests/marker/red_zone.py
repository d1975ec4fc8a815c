"""The 5-byte NOP is only where the red zone is dead. Linux 6.18+ turns a
uprobe on a 5-byte NOP into a CALL to a trampoline, which writes the return
address below %rsp: in a leaf function that keeps values in its red zone,
that corrupts them. Leaf functions compiled with gcc -O0/-O2 and clang -O2
keep values in the red zone around a plain site (1-byte NOP, inline) and a
gated site (5-byte NOP in the out-of-line function); each fires a million
times under bpftrace and every result must be right. A control with a 5-byte
NOP placed inline (which probekit never generates) shows the corruption, so
the test can tell."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from common import PROBEKIT, expect, finish, need, run, skip, tmpdir  # noqa: E402

if os.geteuid() != 0:
    skip("bpftrace attaches kernel uprobes, which needs root")
need("bpftrace")
if not os.path.ismount("/sys/kernel/tracing"):
    subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"], check=False)

HITS = int(os.environ.get("PROBEKIT_RED_ZONE_HITS", "1000000"))
here = os.path.dirname(os.path.abspath(__file__))
d = tmpdir()
with open(os.path.join(d, "rz.d"), "w") as f:
    f.write("provider rz {\n  probe plain(long v);\n  probe gated(long v);\n  probe unsafe(long v);\n};\n")
run([PROBEKIT, "compile", "rz.d", "-o", "rz.h"], cwd=d, check=True)
shutil.copy(os.path.join(here, "red_zone.c"), d)


def traced(exe, probe, n):
    r = run(["bpftrace", "-e", f"usdt:{exe}:rz:{probe} {{ @hits = count(); }}", "-c", f"{exe} {n} {probe}"], timeout=600)
    out = r.stdout + r.stderr
    wrong = next((int(l.split()[0]) for l in out.splitlines() if " wrong of " in l), None)
    hits = next((int(l.split()[-1]) for l in out.splitlines() if l.startswith("@hits:")), 0)
    return wrong, hits, out


for cc, opt in (("gcc", "-O0"), ("gcc", "-O2"), ("clang", "-O2")):
    if shutil.which(cc) is None:
        print(f"note: {cc} is not installed, its variant is not run")
        continue
    exe = os.path.join(d, f"rz_{cc}{opt}")
    run([cc, opt, "-Wall", "red_zone.c", "-o", exe], cwd=d, check=True)
    dis = run(["objdump", "-d", "--no-show-raw-insn", exe], check=True).stdout
    leaf = dis[dis.find("<leaf_plain>:"):]
    leaf = leaf[:leaf.find("\n\n")]
    expect("(%rsp)" in leaf or "(%rbp)" in leaf, f"{cc} {opt}: leaf_plain keeps values on the stack below its frame")
    for probe in ("plain", "gated"):
        wrong, hits, out = traced(exe, probe, HITS)
        expect(wrong == 0 and hits == HITS, f"{cc} {opt}: {probe} site, {hits} hits under bpftrace, {wrong} wrong results"
               + ("" if wrong == 0 and hits == HITS else "\n" + out[-2000:]))
    wrong, hits, out = traced(exe, "unsafe", 100000)
    if wrong:
        print(f"ok: control: an inline 5-byte NOP under bpftrace gave {wrong} wrong results of 100000 ({cc} {opt})")
    else:
        print(f"note: control: the inline 5-byte NOP gave no wrong result ({cc} {opt}): this kernel does not "
              "optimize uprobes on 5-byte NOPs, or this compiler kept nothing below %rsp there")

finish()
