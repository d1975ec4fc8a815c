"""`probekit list` and `probekit verify` against binaries built here: what
list prints equals what readelf and gdb read from the same files; live
processes show runtime addresses and gate values; verify flags each rule;
corrupt files give clear errors."""
import json
import os
import random
import re
import shutil
import subprocess
import time

from common import PROBEKIT, expect, finish, need, run, stapsdt_notes, tmpdir

need("gcc")
need("readelf")
d = tmpdir()

SPEC = """provider app {
    /** A request started. */
    probe req__start(int fd, string path);
    probe tick();
    probe gated(long n);
};
"""
with open(os.path.join(d, "app.d"), "w") as f:
    f.write(SPEC)
run([PROBEKIT, "compile", "app.d", "-o", "app.h"], cwd=d, check=True)
with open(os.path.join(d, "main.c"), "w") as f:
    f.write(r"""
#include <sys/sdt.h>
#include <unistd.h>
#include <stdlib.h>
#include "app.h"
void lib_fire(int);
int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  for (int i = 0; i < rounds; ++i) {
    APP_REQ_START(i, "/x");
    APP_TICK();
    APP_GATED_GATED(i);
    STAP_PROBE1(raw, plain, i);    /* a sys/sdt.h probe: untyped, no semaphore */
    lib_fire(i);
    if (rounds > 1) usleep(20000);
  }
  return 0;
}
""")
with open(os.path.join(d, "lib.c"), "w") as f:
    f.write('#include "app.h"\nvoid lib_fire(int i) { APP_TICK(); (void)i; }\n')
run(["gcc", "-O2", "-fPIC", "-shared", "lib.c", "-o", "libapp.so"], cwd=d, check=True)
run(["gcc", "-O2", "main.c", "-L.", "-lapp", "-Wl,-rpath,$ORIGIN", "-o", "main"], cwd=d, check=True)
exe = os.path.join(d, "main")

# ---- list: every note, exactly as readelf and gdb read it -----------------
r = run([PROBEKIT, "list", "--format", "json", "-v", exe])
expect(r.returncode == 0, "list --format json -v")
doc = json.loads(r.stdout)
probes = {(p["provider"], p["name"]): p for o in doc["objects"] for p in o["probes"]}
notes = stapsdt_notes(exe)
expect(len(probes) == len({(n[0], n[1]) for n in notes}) == 4, f"list finds the 4 probes readelf shows: {sorted(probes)}")
for prov, name, args, sem in notes:
    p = probes.get((prov, name))
    if not p:
        expect(False, f"{prov}:{name} listed")
        continue
    specs = [" ".join(a["spec"] for a in s["args"]) for s in p["sites"]]
    expect(args in specs, f"{prov}:{name}: argument string {args!r} as readelf")
    expect((p["semaphore"] is None) == (sem == 0) and (sem == 0 or int(p["semaphore"], 16) == sem),
           f"{prov}:{name}: semaphore {p['semaphore']} as readelf ({sem:#x})")
expect(probes[("app", "req__start")]["signature"] == "req__start(string path)".replace("req__start(", "req__start(int fd, "),
       f"typed signature from .note.probekit: {probes[('app', 'req__start')]['signature']}")
expect(probes[("app", "req__start")]["doc"] == "A request started.", "doc comment from .note.probekit")
expect(probes[("raw", "plain")]["typed"] is False and probes[("raw", "plain")]["signature"] == "plain(arg0)", "sys/sdt.h probe: untyped")
req_args = probes[("app", "req__start")]["sites"][0]["args"]
expect([a["size"] for a in req_args] == [4, 8] and req_args[0]["signed"] is True, f"decoded argument sizes {req_args}")

if shutil.which("gdb"):
    g = run(["gdb", "-batch", "-ex", "info probes", exe]).stdout
    gdb_rows = {(f[1], f[2], int(f[3], 16)) for f in (l.split() for l in g.splitlines()) if len(f) > 3 and f[0] == "stap"}
    ours = run([PROBEKIT, "list", "--format", "gdb", exe]).stdout
    our_rows = {(m.group(1), m.group(2), int(m.group(3), 16)) for m in re.finditer(r"^stap (\S+) (\S+) (0x[0-9a-f]+)", ours, re.M)}
    expect(gdb_rows == our_rows and len(our_rows) == 4, f"--format gdb: the sites gdb's info probes shows ({sorted(our_rows)})")

stap = run([PROBEKIT, "list", "--format", "stap", exe]).stdout
expect(f'process("{exe}").mark("req__start") $arg1:long $arg2:long' in stap, "--format stap lines")

# Globs and filters.
text = run([PROBEKIT, "list", exe, "app:req*"]).stdout
expect(text.count("\n") == 1 and text.startswith("app:req__start(int fd, string path)  1 site  semaphore 0x"), f"glob app:req*: {text!r}")
expect("app:req__start" in run([PROBEKIT, "list", exe, "req-start"]).stdout, "a name glob in consumers' spelling (req-start)")
r = run([PROBEKIT, "list", exe, "nomatch:*"])
expect(r.returncode == 0 and r.stdout == "" and "no probe matches" in r.stderr, "a glob that matches nothing")

# The attach path: the gated form's out-of-line site is a 5-byte NOP.
v = run([PROBEKIT, "list", "-v", exe, "app:gated"]).stdout
dis = run(["objdump", "-d", exe]).stdout if shutil.which("objdump") else ""
addr = re.search(r"0x([0-9a-f]+) \[(fast|int3)\]", v)
if addr and dis:
    line = next((l for l in dis.splitlines() if l.strip().startswith(addr.group(1) + ":")), "")
    expect("0f 1f 44 00 00" in line, f"app:gated site is a 5-byte NOP ({line.strip()})")
    fast_kernel = os.uname().release.split(".")[:2] >= ["6", "18"]
    expect(addr.group(2) == ("fast" if fast_kernel else "int3"), f"attach path {addr.group(2)} on kernel {os.uname().release}")
plain = run([PROBEKIT, "list", "-v", exe, "app:req__start"]).stdout
expect("[int3]" in plain, "an inline site (1-byte NOP) attaches with int3")

# ---- live process --------------------------------------------------------
proc = subprocess.Popen([exe, "300"], stdout=subprocess.DEVNULL)
try:
    time.sleep(0.3)
    r = run([PROBEKIT, "list", "-p", str(proc.pid), "--format", "json", "app:*"])
    doc = json.loads(r.stdout)
    objs = {os.path.basename(o["path"]): o for o in doc["objects"]}
    expect(set(objs) == {"main", "libapp.so"}, f"-p: the executable and the shared library ({sorted(objs)})")
    maps = open(f"/proc/{proc.pid}/maps").read()
    main_base = min(int(l.split("-")[0], 16) for l in maps.splitlines() if l.endswith("/main"))
    sem = int(probes[("app", "tick")]["semaphore"], 16)
    live_tick = next(p for p in objs["main"]["probes"] if p["name"] == "tick")
    expect(int(live_tick["semaphore"], 16) == main_base + sem, "-p: runtime semaphore address = load address + link-time address")
    expect(live_tick["gate"] == {"external": 0, "in_process": 0, "enabled": False}, f"-p: gate closed: {live_tick['gate']}")
    if os.geteuid() == 0 and shutil.which("bpftrace"):
        if not os.path.ismount("/sys/kernel/tracing"):
            subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"], check=False)
        bt = subprocess.Popen(["bpftrace", "-p", str(proc.pid), "-e", f"usdt:{exe}:app:gated {{ @n = count(); }}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            gate = None
            for _ in range(50):
                time.sleep(0.1)
                live = json.loads(run([PROBEKIT, "list", "-p", str(proc.pid), "--format", "json", "app:gated"]).stdout)
                gate = live["objects"][0]["probes"][0]["gate"]
                if gate["external"]:
                    break
            expect(gate == {"external": 1, "in_process": 0, "enabled": True}, f"-p: bpftrace attached: gate {gate}")
        finally:
            bt.terminate()
            bt.wait()
    else:
        print("note: not root or no bpftrace: the enabled-gate check is not run")
finally:
    proc.kill()
    proc.wait()

# ---- errors ----------------------------------------------------------------
r = run([PROBEKIT, "list", os.path.join(d, "nope")])
expect(r.returncode == 1 and r.stderr.strip().endswith("nope: No such file or directory"), f"missing file: {r.stderr.strip()}")
r = run([PROBEKIT, "list", os.path.join(d, "app.d")])
expect(r.returncode == 1 and "not an ELF file" in r.stderr, f"not ELF: {r.stderr.strip()}")
r = run([PROBEKIT, "list", "/bin/true"])
expect(r.returncode == 0 and r.stderr.strip() == "no probes", f"no probes: exit 0 with a message ({r.stderr.strip()})")
r = run([PROBEKIT, "list", "-p", "999999999"])
expect(r.returncode == 1 and "no process with PID 999999999" in r.stderr, f"no such PID: {r.stderr.strip()}")
if os.geteuid() == 0 and shutil.which("setpriv"):
    sleeper = subprocess.Popen([exe, "100"], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.1)
        r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", PROBEKIT, "list", "-p", str(sleeper.pid)])
        expect("CAP_SYS_PTRACE" in r.stdout + r.stderr, f"permission denied names the capability ({(r.stdout + r.stderr).strip()[:200]})")
    finally:
        sleeper.kill()
        sleeper.wait()

# Truncated and corrupted copies never crash and never hang.
blob = open(exe, "rb").read()
rng = random.Random(7)
bad_runs = []
for i in range(60):
    data = bytearray(blob[: rng.randrange(1, len(blob))] if i % 2 else blob)
    for _ in range(rng.randrange(1, 40)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    path = os.path.join(d, "corrupt")
    open(path, "wb").write(bytes(data))
    r = run([PROBEKIT, "list", "-v", "--format", "json", path], timeout=20)
    if r.returncode not in (0, 1):
        bad_runs.append((i, r.returncode, r.stderr[-300:]))
    if r.returncode == 1 and not r.stderr.startswith("probekit list: error: " + path + ": "):
        bad_runs.append((i, "message", r.stderr[-300:]))
expect(not bad_runs, f"60 corrupted copies: exit 0 or 1 with a message, never a crash ({bad_runs[:3]})")

# ---- verify ----------------------------------------------------------------
r = run([PROBEKIT, "verify", exe, "--spec", os.path.join(d, "app.d")])
expect(r.returncode == 0 and r.stdout.strip() == f"{exe}: ok, 4 probes", f"verify --spec on a good binary: {r.stdout.strip()} {r.stderr.strip()}")
with open(os.path.join(d, "less.d"), "w") as f:
    f.write("provider app { probe req__start(int fd, string path); probe tick(); probe missing(); };\n")
r = run([PROBEKIT, "verify", exe, "--spec", os.path.join(d, "less.d")])
expect(r.returncode == 1 and "app:missing: is declared in" in r.stderr and "app:gated: is in the binary but not declared" in r.stderr,
       f"verify --spec: probes lost and probes undeclared are errors ({r.stderr.strip()})")

with open(os.path.join(d, "bad.c"), "w") as f:
    f.write(r"""
#include <sys/sdt.h>
long counter; __thread int tl;
void f(void) { STAP_PROBE2(bad, globals, counter, tl); }
void g(short s, long l) { STAP_PROBE1(bad, sig, s); STAP_PROBE1(bad, sig, l); }
""")
with open(os.path.join(d, "ro.c"), "w") as f:
    f.write(r"""
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
const unsigned short ro_x_semaphore __attribute__((section(".rodata"))) = 0;
void h(void) { STAP_PROBE(ro, x); }
""")
run(["gcc", "-O1", "-c", "bad.c", "-o", "bad.o"], cwd=d, check=True)
r = run([PROBEKIT, "verify", "--format", "json", os.path.join(d, "bad.o")])
rules = sorted({f["rule"] for b in json.loads(r.stdout)["binaries"] for f in b["findings"]})
expect(r.returncode == 1, "verify exits 1 on errors")
msg = run([PROBEKIT, "verify", os.path.join(d, "bad.o")]).stderr
expect("'-8@counter(%rip)' is %rip-relative" in msg and "uses the %fs: segment" in msg, "verify: %rip and %fs: operands")
expect("bad:sig: site" in msg and "has arguments (8)" in msg.replace("(-8)", "(8)"), f"verify: one probe, two signatures")
run(["gcc", "-O1", "-shared", "-fPIC", "ro.c", "-o", "ro.so"], cwd=d, check=True)
msg = run([PROBEKIT, "verify", os.path.join(d, "ro.so")]).stderr
expect("in the read-only section .rodata" in msg, f"verify: a semaphore in a read-only section")
with open(os.path.join(d, "two.c"), "w") as f:
    f.write('#define _SDT_HAS_SEMAPHORES 1\n#include <sys/sdt.h>\n'
            'static unsigned short two_x_semaphore __attribute__((section(".probes"), used));\n'
            'void FN(void) { STAP_PROBE(two, x); }\n')
run(["gcc", "-O1", "-c", "-DFN=a", "two.c", "-o", "two_a.o"], cwd=d, check=True)
run(["gcc", "-O1", "-c", "-DFN=b", "two.c", "-o", "two_b.o"], cwd=d, check=True)
run(["gcc", "-shared", "two_a.o", "two_b.o", "-o", "two.so"], cwd=d, check=True)
msg = run([PROBEKIT, "verify", os.path.join(d, "two.so")]).stderr
expect("2 different semaphores for one probe" in msg, f"verify: two semaphores for one probe ({msg.strip()[:300]})")

# A .note.probekit entry that disagrees with .note.stapsdt: written by hand
# (docs/note-probekit.md) next to sys/sdt.h sites, as a stale or foreign
# header could leave it.
META_NOTE = r"""
.pushsection .note.probekit,"",@note
.balign 4
.4byte 9, 2f-1f, 1
.asciz "probekit"
.balign 4
1:  .byte 1, NARGS
.2byte 0
.asciz "meta"
.asciz "NAME"
ARGS
.asciz ""
2:  .balign 4
.popsection
"""
def meta_entry(name, args):
    body = "\n".join(f'.byte {kind}, {size}\n.asciz "{an}"\n.asciz "{ty}"' for kind, size, an, ty in args)
    return META_NOTE.replace("NARGS", str(len(args))).replace("NAME", name).replace("ARGS", body)
with open(os.path.join(d, "meta.c"), "w") as f:
    f.write("#include <sys/sdt.h>\n")
    f.write("__asm__(" + json.dumps(meta_entry("count", [(1, -4, "a", "int"), (2, 8, "b", "unsigned long"), (1, -4, "c", "int")])) + ");\n")
    f.write("__asm__(" + json.dumps(meta_entry("size", [(1, -4, "n", "int")])) + ");\n")
    f.write("__asm__(" + json.dumps(meta_entry("agree", [(1, -4, "n", "int")])) + ");\n")
    f.write("int main(int argc, char **argv) {\n"
            "  long l = argc; unsigned long u = (unsigned long)argv;\n"
            "  STAP_PROBE2(meta, count, argc, u);\n"   # 2 arguments; the note says 3
            "  STAP_PROBE1(meta, size, l);\n"          # -8@; the note says -4@
            "  STAP_PROBE1(meta, agree, argc);\n"      # -4@, as the note says
            "  return 0;\n}\n")
run(["gcc", "-O1", "meta.c", "-o", "meta"], cwd=d, check=True)
r = run([PROBEKIT, "verify", os.path.join(d, "meta")])
lines = [l for l in r.stderr.splitlines() if "[metadata]" in l]
expect(r.returncode == 1, f"verify exits 1 when .note.probekit disagrees with .note.stapsdt ({r.stdout.strip()} {r.stderr.strip()})")
expect(any("meta:count:" in l and ".note.probekit declares 3 arguments, .note.stapsdt has 2" in l for l in lines),
       f"verify: a different argument count names the probe and both counts ({lines})")
expect(any("meta:size:" in l and "argument 1: .note.probekit says -4@, .note.stapsdt says -8@" in l for l in lines),
       f"verify: a different argument size names the probe, the argument and both sizes ({lines})")
expect(not any("meta:agree" in l for l in r.stderr.splitlines()), f"verify: an agreeing entry is not flagged ({r.stderr.strip()})")
r = run([PROBEKIT, "list", "--format", "json", os.path.join(d, "meta")])
probes = {p["name"]: p for o in json.loads(r.stdout)["objects"] for p in o["probes"]}
expect(probes.get("count", {}).get("typed") is True and len(probes["count"]["args"]) == 3,
       f"list shows the hand-written entry's arguments ({r.stdout[:300]})")

finish()
