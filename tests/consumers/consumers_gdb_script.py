"""`probekit compile --format gdb`: the generated script, sourced by gdb
(`gdb -batch -x sk.gdb -ex 'run 2 0' ./prog`), stops at every probe of a real
program and prints each argument by name with the exact value fired: signed
and unsigned integers of each width, strings as text, a pointer, bools, the
floats' bits, unnamed arguments, a `__` name, and all eight arguments of a
probe with more than six. Every hit continues: the program runs to its end."""
from script_program import EXPECTED, build, generate
from common import expect, finish, need, run

need("gdb")
need("gcc")

d, prog = build("gdb")
script = generate(d, "gdb")
r = run(["gdb", "-nx", "-batch", "-x", script, "-ex", "run 2 0", prog], cwd=d, timeout=300)
lines = [l for l in r.stdout.splitlines() if l.startswith("sk:")]
expect("fired 2" in r.stdout and "exited normally" in r.stdout,
       "gdb ran the program to its end through every breakpoint" + ("" if "fired 2" in r.stdout else f"\n{r.stdout}\n{r.stderr}"))
expect(lines == EXPECTED * 2, "gdb prints every probe's arguments by name, exactly, on both rounds"
       + ("" if lines == EXPECTED * 2 else "\n  got:  " + "\n        ".join(lines) + "\n  want: " + "\n        ".join(EXPECTED)))
errors = [l for l in r.stderr.splitlines() if "rror" in l or "No symbol" in l]
expect(not errors, f"gdb reports no errors ({errors[:3]})")
finish()
