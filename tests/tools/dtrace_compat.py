"""probekit-dtrace as a drop-in for SystemTap's dtrace: the same header macros
for every corpus file, the same semaphore objects, and SystemTap's command line
(-C with -I/-D, -x, -64, --types, default output names)."""
import os
import re
import shutil

from common import (PROBEKIT_DTRACE, corpus_files, expect, finish, need, run, stapsdt_notes, tmpdir)

need("gcc")
need("readelf")
have_stap_dtrace = shutil.which("dtrace") is not None
if not have_stap_dtrace:
    print("note: SystemTap's dtrace is not installed; header comparisons against it are skipped")

VOLATILE = re.compile(r"\(\*\(volatile unsigned short \*\) &(\w+), 0\)")


def code_lines(path):
    """Header lines that are code: comments dropped, and our volatile read of
    the semaphore folded back to SystemTap's plain read."""
    with open(path) as f:
        return [VOLATILE.sub(r"(\1, 0)", l) for l in f.read().splitlines() if not l.startswith("/*")]


d = tmpdir()
if have_stap_dtrace:
    for spec in corpus_files():
        base = os.path.basename(spec)
        ours, theirs = os.path.join(d, "ours.h"), os.path.join(d, "theirs.h")
        r = run([PROBEKIT_DTRACE, "-h", "-s", spec, "-o", ours])
        expect(r.returncode == 0, f"{base}: probekit-dtrace -h succeeds")
        run(["dtrace", "-h", "-s", spec, "-o", theirs], check=True)
        a, b = code_lines(ours), code_lines(theirs)
        expect(a == b, f"{base}: header code identical to SystemTap's ({len(a)} lines)")

# -h and -G together build and link like SystemTap's pair; the object holds
# one unsigned short semaphore per probe in .probes, hidden.
spec = os.path.join(d, "app.d")
with open(spec, "w") as f:
    f.write("provider app {\n  probe start(int, char *);\n  probe stop();\n};\n")
run([PROBEKIT_DTRACE, "-h", "-s", "app.d"], cwd=d, check=True)
expect(os.path.exists(os.path.join(d, "app.h")), "-h without -o writes app.h")
run([PROBEKIT_DTRACE, "-G", "-s", "app.d", "-x", "nolibs", "-64", "-fPIC"], cwd=d, check=True)
expect(os.path.exists(os.path.join(d, "app.o")), "-G without -o writes app.o; -x ARG, -64, -fPIC ignored")
syms = run(["readelf", "-sW", "app.o"], cwd=d, check=True).stdout
for sem in ("app_start_semaphore", "app_stop_semaphore"):
    line = next((l for l in syms.splitlines() if l.endswith(" " + sem)), "")
    expect(" 2 OBJECT" in line and "HIDDEN" in line, f"-G defines {sem} as a 2-byte hidden object ({line.strip()})")
sections = run(["readelf", "-SW", "app.o"], cwd=d, check=True).stdout
expect(re.search(r"\.probes\s+PROGBITS", sections) is not None, "-G object has a .probes section")

with open(os.path.join(d, "main.c"), "w") as f:
    f.write('#include "app.h"\n'
            'int main(int argc, char **argv) {\n'
            '  (void)argv;\n'
            '  APP_START(argc, "x");\n'
            '  if (APP_STOP_ENABLED()) return 3;\n'
            '  APP_STOP();\n'
            '  return 0;\n'
            '}\n')
run(["gcc", "-O2", "-Wall", "-Werror", "main.c", "app.o", "-o", "main"], cwd=d, check=True)
r = run([os.path.join(d, "main")])
expect(r.returncode == 0, "program built from -h and -G runs; semaphore starts at zero")
notes = stapsdt_notes(os.path.join(d, "main"))
expect(sorted((n[0], n[1], len(n[2].split())) for n in notes) == [("app", "start", 2), ("app", "stop", 0)],
       f"notes of the linked program: {notes}")
expect(all(n[3] != 0 for n in notes), "every note carries its semaphore address")

# -C runs cpp with -I and -D; --types prints SystemTap's note; -k keeps the source.
os.makedirs(os.path.join(d, "inc"))
with open(os.path.join(d, "inc", "types.h"), "w") as f:
    f.write("#define Oid unsigned int\n")
with open(os.path.join(d, "cpp.d"), "w") as f:
    f.write('#include "types.h"\n'
            "provider db {\n"
            "  probe read(Oid);\n"
            "#ifdef EXTRA\n"
            "  probe extra(int);\n"
            "#endif\n"
            "};\n")
r = run([PROBEKIT_DTRACE, "-C", "-Iinc", "-DEXTRA", "-h", "-s", "cpp.d", "-o", "cpp.h", "--types"], cwd=d)
expect(r.returncode == 0 and "obsolete option --types" in r.stdout, f"-C -I -D --types (stderr: {r.stderr.strip()})")
text = open(os.path.join(d, "cpp.h")).read()
expect("/* DB_READ ( unsigned int ) */" in text and "DB_EXTRA" in text, "-C applied the include and the -D")
r = run([PROBEKIT_DTRACE, "-C", "-h", "-s", "cpp.d", "-o", "cpp2.h"], cwd=d)
expect(r.returncode == 1 and "types.h" in r.stderr and not os.path.exists(os.path.join(d, "cpp2.h")),
       "-C with a missing include fails with cpp's message and writes nothing")
r = run([PROBEKIT_DTRACE, "-C", "-Iinc", "-h", "-s", "cpp.d", "-o", "cpp3.h"], cwd=d)
expect(r.returncode == 0 and "DB_EXTRA" not in open(os.path.join(d, "cpp3.h")).read(), "-C without -DEXTRA drops the #ifdef'd probe")
r = run([PROBEKIT_DTRACE, "-G", "-k", "-s", "app.d", "-o", "k.o"], cwd=d)
src = r.stdout.strip().removeprefix("source: ")
expect(r.returncode == 0 and os.path.exists(src), f"-k keeps the generated source ({src})")
if os.path.exists(src):
    os.unlink(src)

# $CC is honoured for -G, and its failure is reported without leaving output.
env = dict(os.environ, CC="false")
r = run([PROBEKIT_DTRACE, "-G", "-s", "app.d", "-o", "bad.o"], cwd=d, env=env)
expect(r.returncode == 1 and "failed" in r.stderr and not os.path.exists(os.path.join(d, "bad.o")), "-G with a failing $CC")

finish()
