"""The runtime's own probes (probes/probekit.d) are in libprobekit.so as real
USDT probes: `probekit list` shows the seven with their typed signatures,
readelf -n shows their .note.stapsdt entries, and gdb, stopping at
probekit:callback__registered, callback__unregistered, statedump__begin and
statedump__end in a program that registers a callback with key 4242 and
requests a statedump with key 4243, reads exactly those values; at
thread_dump it reads the dump's text, its length (the one the program's own
copy has) and its thread count.

argv: LIBPROBEKIT_SO PROGRAM"""
import json
import os
import shutil
import subprocess
import sys

SKIP = 77
lib, prog = sys.argv[1], sys.argv[2]
probekit = os.environ["PROBEKIT"]
failures = []


def expect(cond, what, detail=""):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        if detail:
            print(detail)
        failures.append(what)


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=300, **kw)


WANT = {
    "callback__registered": ["string provider", "string name", "uint64_t key"],
    "callback__unregistered": ["string provider", "string name", "uint64_t key"],
    "probe__insert": ["string provider", "string name"],
    "probe__remove": ["string provider", "string name"],
    "statedump__begin": ["string name", "uint64_t key"],
    "statedump__end": ["string name", "uint64_t key"],
    "thread_dump": ["string text", "uint64_t length", "int32_t threads"],
}

r = run([probekit, "list", "--format", "json", lib, "probekit:*"])
expect(r.returncode == 0, "probekit list libprobekit.so exits 0", r.stderr)
listed = json.loads(r.stdout) if r.returncode == 0 else {"objects": []}
probes = [p for o in listed["objects"] for p in o["probes"]]
names = sorted(p.get("name") for p in probes if p.get("provider") == "probekit")
expect(names == sorted(WANT), "probekit list shows the seven runtime probes", f"got {names}")
text = run([probekit, "list", lib, "probekit:*"]).stdout
for name, args in WANT.items():
    line = next((l for l in text.splitlines() if f"probekit:{name}(" in l or f"probekit:{name} " in l), "")
    expect(f"probekit:{name}({', '.join(args)})" in line, f"probekit list: {name} has arguments {args}", text)

if shutil.which("readelf") is None:
    print("SKIP part: readelf is not installed")
else:
    notes = run(["readelf", "-n", lib]).stdout
    for name in WANT:
        expect(f"Name: {name}\n" in notes.replace("\r", ""), f"readelf -n sees probekit:{name}")
    expect(notes.count("Provider: probekit") == len(WANT), "readelf -n: one site per runtime probe",
           f"{notes.count('Provider: probekit')} sites")

if shutil.which("gdb") is None:
    print("SKIP: gdb is not installed: the firing part is not checked")
    sys.exit(SKIP if not failures else 1)

# Each probe: gdb stops, prints its arguments on a HIT line, and continues.
STR0, STR1 = "(const char *)$_probe_arg0", "(const char *)$_probe_arg1"
BREAKS = [
    ("callback__registered", "registered %s %s %lu", f"{STR0}, {STR1}, $_probe_arg2"),
    ("callback__unregistered", "unregistered %s %s %lu", f"{STR0}, {STR1}, $_probe_arg2"),
    ("statedump__begin", "begin %s %lu", f"{STR0}, $_probe_arg1"),
    ("statedump__end", "end %s %lu", f"{STR0}, $_probe_arg1"),
    ("thread_dump", "thread_dump %lu %d %s", f"$_probe_arg1, $_probe_arg2, {STR0}"),
]
script = "set pagination off\nset breakpoint pending on\nset startup-with-shell off\n" + "".join(
    f'break -probe-stap probekit:{probe}\ncommands\nsilent\nprintf "HIT {fmt}\\n", {args}\ncontinue\nend\n'
    for probe, fmt, args in BREAKS) + "run\n"
gdbfile = os.path.join(os.environ.get("MESON_BUILD_ROOT", "/tmp"), "own_probes.gdb")
with open(gdbfile, "w") as f:
    f.write(script)
env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")  # LSan cannot run under ptrace
r = run(["gdb", "-nx", "-batch", "-x", gdbfile, "--args", prog], env=env)
hits = [l for l in r.stdout.splitlines() if l.startswith("HIT ")]
dump = [l for l in hits if l.startswith("HIT thread_dump ")]
hits = [l for l in hits if l not in dump]
want = ["HIT registered own fired 4242", "HIT unregistered own fired 4242", "HIT begin owndump 4243",
        "HIT end owndump 4243"]
printed = [l.split()[1] for l in r.stdout.splitlines() if l.startswith("DUMP ")]
fields = dump[0].split(" ", 4) if len(dump) == 1 else []
expect(len(fields) == 5 and printed == [fields[2]] and int(fields[3]) >= 1
       and fields[4].startswith("probekit thread dump #1 of pid "),
       "gdb stops at thread_dump once, with the dump's text, the program's length and the thread count",
       f"got {dump}, program printed {printed}")
expect(hits == want, "gdb stops at the runtime's probes with the exact values", f"got {hits}\n{r.stdout}\n{r.stderr}")
expect("exited normally" in r.stdout, "the program exits normally under gdb", r.stdout[-2000:])
sys.exit(1 if failures else 0)
