"""What the typed forms promise: C++ rejects arguments that do not match the
spec with a readable message, builders run only in the gated form and only
while the gate is open, gated arguments are not evaluated while closed, and
_ENABLED() is re-read on every test (a loop sees a tracer that attaches late),
for probekit's header and for probekit-dtrace's."""
import os
import shutil

from common import PROBEKIT, PROBEKIT_DTRACE, expect, finish, need, run, tmpdir

need("g++")
need("gcc")

SPEC = """
provider app {
    probe req__start(int fd, string path);
    probe ptr(struct conn *c);
    probe any(mystery_t m);
    probe flag(bool b, double d);
};
"""
d = tmpdir()
with open(os.path.join(d, "app.d"), "w") as f:
    f.write(SPEC)
r = run([PROBEKIT, "compile", "app.d", "-o", "app.h"], cwd=d)
expect(r.returncode == 0, "spec compiles (with an unknown-type warning)")
run([PROBEKIT_DTRACE, "-h", "-s", "app.d", "-o", "dt.h"], cwd=d, check=True)

PRELUDE = '#include <string>\n#include <string_view>\n#include "app.h"\nstruct conn { int x; };\nstruct big { long a, b; };\nenum class E { A = 7 };\n'


def cxx(body, compilers=("g++", "clang++")):
    results = []
    for c in compilers:
        if not shutil.which(c):
            continue
        src = os.path.join(d, "t.cc")
        with open(src, "w") as f:
            f.write(PRELUDE + "int main() {\n" + body + "\n  return 0;\n}\n")
        results.append((c, run([c, "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-c", src, "-o", os.path.join(d, "t.o")], cwd=d)))
    return results


REJECTED = [
    ('APP_REQ_START(std::string("7"), "p");', "app:req__start: argument 1 'fd' must be a number (int); the spec declares 'int fd'"),
    ('APP_REQ_START(1, 42);', "app:req__start: argument 2 'path' must be a NUL-terminated string (const char * or an object with c_str()); the spec declares 'string path'"),
    ('APP_REQ_START(1, std::string_view("p"));', "argument 2 'path' must be a NUL-terminated string"),
    ('int x = 1; APP_PTR(x);', "app:ptr: argument 1 'c' must be a pointer (struct conn *)"),
    ('APP_ANY(big{});', "app:any: argument 1 'm' must be a scalar of at most 8 bytes (mystery_t is untyped)"),
    ('APP_REQ_START([] { return 1; }, "p");', "app:req__start: argument 1 'fd' is a builder (a callable): builders run only in the gated form APP_REQ_START_GATED(...)"),
    ('APP_FLAG(nullptr, 1.0);', "app:flag: argument 1 'b' must be a bool"),
]
for body, message in REJECTED:
    for c, r in cxx(body):
        expect(r.returncode != 0 and message in r.stderr, f"{c} rejects `{body}` with: {message}"
               + ("" if message in r.stderr else f"\n--- got:\n{r.stderr[:1500]}"))

ACCEPTED = [
    'std::string s = "p"; APP_REQ_START(7L, s);',
    'char buf[8] = "x"; APP_REQ_START(E::A, buf);',
    'conn c{}; APP_PTR(&c); APP_PTR(nullptr);',
    'APP_ANY(3); APP_ANY(&main);',
    'APP_FLAG(true, 1); APP_FLAG(0, 2.5f);',
    'std::string s = "p"; APP_REQ_START_GATED([&] { return 1 + 2; }, [&] { return s + "q"; });',
    # Several gated sites in a function with destructors in between: clang 14
    # rejects asm goto there ("cannot jump from this asm goto statement").
    'APP_REQ_START_GATED(1, "a"); { std::string s = "p"; APP_REQ_START_GATED(2, s); } APP_REQ_START_GATED(3, "b");',
]
for body in ACCEPTED:
    for c, r in cxx(body):
        expect(r.returncode == 0, f"{c} accepts `{body}`" + ("" if r.returncode == 0 else f"\n{r.stderr[:1500]}"))

# C: the typed wrapper converts like any C call, so a string passed as an int
# is the compiler's own diagnostic.
with open(os.path.join(d, "bad.c"), "w") as f:
    f.write('#include "app.h"\nint main(void) { APP_REQ_START("7", "p"); return 0; }\n')
r = run(["gcc", "-std=c11", "-Wall", "-Werror", "-c", "bad.c"], cwd=d)
expect(r.returncode != 0 and "probekit_app_req__start" in r.stderr, "C: a string for an int argument does not compile")

# C: an untyped argument that is a struct by value is a compile error that says so.
with open(os.path.join(d, "struct.c"), "w") as f:
    f.write('#include "app.h"\nstruct big { long a, b; };\nint main(void) { struct big b = {1, 2}; APP_ANY(b); return 0; }\n')
r = run(["gcc", "-std=c11", "-c", "struct.c"], cwd=d)
expect(r.returncode != 0 and "app:any: argument 1 'm' must be a scalar of at most 8 bytes" in r.stderr,
       "C: a struct passed by value to an untyped argument is a clear compile error")

# Behaviour at run time. The test plays the tracer by writing the gate word:
# the low half is the SDT semaphore, the high half the in-process count.
RUNTIME = r"""
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>
#include "app.h"
static int built = 0, evaluated = 0;
static int next_fd() { ++evaluated; return 3; }
int main() {
  auto fire = [] { APP_REQ_START_GATED([] { ++built; return 1; }, "p"); APP_REQ_START_GATED(next_fd(), "p"); };
  fire();
  if (built != 0 || evaluated != 0) { std::puts("closed gate ran the builder or evaluated arguments"); return 1; }
  app_req__start_semaphore = 1;           /* an external tracer */
  fire();
  if (built != 1 || evaluated != 1) { std::puts("open gate (external) did not run"); return 2; }
  app_req__start_semaphore = 0x10000;     /* the in-process runtime */
  fire();
  if (built != 2 || evaluated != 2) { std::puts("open gate (in-process) did not run"); return 3; }
  app_req__start_semaphore = 0;
  APP_REQ_START(next_fd(), "p");          /* the plain form always evaluates */
  if (evaluated != 3) return 4;
  /* A loop that tests the gate must see a tracer that attaches later. */
  alarm(10);
  std::thread t([] { usleep(50000); app_flag_semaphore = 1; });
  unsigned long spins = 0;
  while (!APP_FLAG_ENABLED()) ++spins;
  t.join();
  std::printf("ok after %lu spins\n", spins);
  return 0;
}
"""
with open(os.path.join(d, "rt.cc"), "w") as f:
    f.write(RUNTIME)
for c in ("g++", "clang++"):
    if not shutil.which(c):
        continue
    exe = os.path.join(d, "rt_" + c)
    run([c, "-std=c++17", "-O2", "-pthread", "rt.cc", "-o", exe], cwd=d, check=True)
    r = run([exe], timeout=60)
    expect(r.returncode == 0 and r.stdout.startswith("ok"), f"{c}: gated semantics and a late-attaching tracer ({r.stdout.strip()}, status {r.returncode})")

# The same loop against probekit-dtrace's header, whose _ENABLED() reads the
# semaphore through a volatile access.
with open(os.path.join(d, "dt.c"), "w") as f:
    f.write(r"""
#include <pthread.h>
#include <unistd.h>
#include "dt.h"
unsigned short app_flag_semaphore __attribute__((section(".probes")));
static void *attach(void *arg) { (void)arg; usleep(50000); app_flag_semaphore = 1; return 0; }
int main(void) {
  pthread_t t;
  alarm(10);
  pthread_create(&t, 0, attach, 0);
  while (!APP_FLAG_ENABLED()) { }
  pthread_join(t, 0);
  return 0;
}
""")
run(["gcc", "-O2", "-pthread", "dt.c", "-o", "dt"], cwd=d, check=True)
r = run([os.path.join(d, "dt")], timeout=60)
expect(r.returncode == 0, f"probekit-dtrace header: _ENABLED() loop sees a late tracer (status {r.returncode})")

finish()
