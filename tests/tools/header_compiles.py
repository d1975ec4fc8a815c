"""The header of `probekit compile` builds as C11 and C++17/20 with gcc and
clang under -Wall -Wextra -Wpedantic -Werror, at -O0 and -O2 (gated sites
several times in one function); its notes carry each
argument converted to the spec's type; semaphores are one per probe per
linked object; several generated headers share one translation unit."""
import os
import re
import shutil

from common import PROBEKIT, expect, finish, need, run, stapsdt_notes, tmpdir

need("readelf")
compilers = [c for c in ("gcc", "clang") if shutil.which(c)]
if not compilers:
    from common import skip
    skip("neither gcc nor clang is installed")

SPEC = r"""
typedef unsigned long long u64_alias;
#define Oid unsigned int
provider all {
    /** Every scalar type, in order. */
    probe scalars(int8_t a, uint8_t b, int16_t c, uint16_t d, int32_t e, uint32_t f,
                  int64_t g, uint64_t h, char i, signed char j, unsigned char k, bool l);
    probe widths(short a, long b, long long c, unsigned d, size_t e, ssize_t f, pid_t g, Oid h, u64_alias i);
    probe floats(float f, double d);
    probe pointers(void *p, const char *s, struct conn *c, char **argv, string text);
    probe none();
    probe twelve(int, int, int, int, int, int, int, int, int, int, int, int);
};
provider other { probe x__y(enum color c); };
"""

# sys/sdt.h writes size and signedness as [-]N@: the spec's type, whatever
# type the call site passed (the test passes long everywhere).
EXPECTED_PREFIX = {
    "scalars": ["-1", "1", "-2", "2", "-4", "4", "-8", "8", None, "-1", "1", "1"],
    "widths": ["-2", "-8", "-8", "4", "8", "-8", "-4", "4", "8"],
    "floats": ["4", "8"],
    "pointers": ["8", "8", "8", "8", "8"],
    "none": [],
    "twelve": ["-4"] * 12,
    "x__y": ["-4"],
}

CALLS = """
  long v = argc;
  ALL_SCALARS(v, v, v, v, v, v, v, v, 'c', v, v, v);
  ALL_WIDTHS(v, v, v, v, v, v, v, v, v);
  ALL_FLOATS(1.5, 2.5f);
  ALL_POINTERS(argv, "s", NULLPTR, argv, "text");
  ALL_NONE();
  ALL_TWELVE(v, v, v, v, v, v, v, v, v, v, v, v);
  OTHER_X_Y(v);
  ALL_NONE_GATED();
  ALL_NONE_GATED();
  ALL_WIDTHS_GATED(v, v, v, v, v, v, v, v, v);
  if (ALL_NONE_ENABLED()) return 1;
"""

d = tmpdir()
with open(os.path.join(d, "all.d"), "w") as f:
    f.write(SPEC)
run([PROBEKIT, "compile", "all.d", "-o", "all.h"], cwd=d, check=True)
with open(os.path.join(d, "second.d"), "w") as f:
    f.write("provider second { probe ping(int n); };\n")
run([PROBEKIT, "compile", "second.d", "-o", "second.h"], cwd=d, check=True)

C_MAIN = '#include "all.h"\n#include "second.h"\n#define NULLPTR ((void *)0)\nint main(int argc, char **argv) {' + CALLS + '  SECOND_PING(argc);\n  return 0;\n}\n'
CXX_MAIN = ('extern "C" {\n#include "all.h"\n}\n#include "second.h"\n#define NULLPTR nullptr\n'
            'int main(int argc, char **argv) {' + CALLS + '  SECOND_PING(argc);\n  return 0;\n}\n')
with open(os.path.join(d, "main.c"), "w") as f:
    f.write(C_MAIN)
with open(os.path.join(d, "main.cc"), "w") as f:
    f.write(CXX_MAIN)

for cc in compilers:
    cxx = {"gcc": "g++", "clang": "clang++"}[cc]
    for lang, compiler, std, src in (("C", cc, "-std=c11", "main.c"), ("C++17", cxx, "-std=c++17", "main.cc"),
                                     ("C++20", cxx, "-std=c++20", "main.cc")):
        for opt in ("-O0", "-O2"):
            exe = os.path.join(d, f"t_{compiler}_{std[5:]}_{opt[1:]}")
            label = f"{compiler} {std} {opt}"
            r = run([compiler, std, opt, "-Wall", "-Wextra", "-Wpedantic", "-Werror", src, "-o", exe], cwd=d)
            expect(r.returncode == 0, f"{label}: builds with -Wall -Wextra -Wpedantic -Werror" + ("" if r.returncode == 0 else "\n" + r.stderr[:4000]))
            if r.returncode != 0:
                continue
            expect(run([exe]).returncode == 0, f"{label}: runs with every gate closed")
            notes = {(p, n): a.split() for p, n, a, _ in stapsdt_notes(exe)}
            for probe, prefixes in EXPECTED_PREFIX.items():
                prov = "other" if probe == "x__y" else "all"
                args = notes.get((prov, probe))
                if args is None:
                    expect(False, f"{label}: note for {prov}:{probe}")
                    continue
                got = [a.split("@")[0] for a in args]
                want = [g if w is None else w for g, w in zip(got, prefixes)]
                expect(got == want and len(got) == len(prefixes), f"{label}: {prov}:{probe} argument sizes {got}")
            expect(("second", "ping") in notes, f"{label}: a second generated header in the same unit")

# One semaphore per probe per linked object, whatever the number of units.
with open(os.path.join(d, "a.c"), "w") as f:
    f.write('#include "all.h"\nvoid fire_a(void) { ALL_NONE(); }\n')
with open(os.path.join(d, "b.c"), "w") as f:
    f.write('#include "all.h"\nvoid fire_a(void);\nint main(void) { fire_a(); ALL_NONE(); return 0; }\n')
run(["gcc", "-O2", "a.c", "b.c", "-o", "ab"], cwd=d, check=True)
syms = run(["readelf", "-sW", os.path.join(d, "ab")], check=True).stdout
defs = [l for l in syms.splitlines() if l.endswith(" all_none_semaphore")]
expect(len(defs) == 1 and " 4 OBJECT" in defs[0], f"two units, one 4-byte semaphore: {defs}")
sems = {s for p, n, _, s in stapsdt_notes(os.path.join(d, "ab")) if n == "none"}
expect(len(sems) == 1, f"both sites of all:none point at the same semaphore {sems}")
sections = run(["readelf", "-SW", os.path.join(d, "ab")], check=True).stdout
m = re.search(r"\.probes\s+PROGBITS\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+)", sections)
expect(m is not None and "W" in m.group(1) and "A" in m.group(1), f".probes is allocated and writable ({m.group(1) if m else None})")

# A shared object keeps its own semaphores, hidden: an executable that uses
# the same provider does not share (or interpose) them.
with open(os.path.join(d, "lib.c"), "w") as f:
    f.write('#include "all.h"\nvoid lib_fire(void) { ALL_NONE(); }\n')
with open(os.path.join(d, "exe.c"), "w") as f:
    f.write('#include "all.h"\nvoid lib_fire(void);\nint main(void) { lib_fire(); ALL_NONE(); return 0; }\n')
run(["gcc", "-O2", "-fPIC", "-shared", "lib.c", "-o", "liball.so"], cwd=d, check=True)
run(["gcc", "-O2", "exe.c", "-L.", "-lall", "-Wl,-rpath,$ORIGIN", "-o", "exe"], cwd=d, check=True)
dyn = run(["readelf", "--dyn-syms", "-W", os.path.join(d, "liball.so")], check=True).stdout
expect("all_none_semaphore" not in dyn, "the shared object does not export its semaphores")
expect(len(stapsdt_notes(os.path.join(d, "liball.so"))) == 1, "the shared object carries its own note")
expect(run([os.path.join(d, "exe")]).returncode == 0, "executable linked with the shared object runs")

finish()
