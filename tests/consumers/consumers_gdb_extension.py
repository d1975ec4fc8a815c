"""The gdb extension (tools/gdb/probekit.py), loaded into gdb in batch mode
against a real program built from the script tests' spec (every kind of
argument, unnamed ones, a doc comment):

- `info probekit` lists every probe with its argument names and types as
  the spec wrote them, and the doc comment; a pattern narrows it (`req-*`
  matches `req__start`), and one that matches nothing says so;
- `probekit break PROVIDER:NAME` stops at the probe and prints its arguments
  by name with the exact values fired: integers of each width and sign,
  strings as text, a pointer, bools, a double and a float as numbers,
  unnamed arguments as argN, all eight of a probe with more than six;
- `probekit args` at each stop prints them again, and refuses clearly when
  the program is not running; bad usage is refused with the usage.
"""
import os

from script_program import build
from common import SOURCE_ROOT, expect, finish, need, run

need("gdb")
need("gcc")

EXTENSION = os.path.join(SOURCE_ROOT, "tools", "gdb", "probekit.py")
d, prog = build("gdb-extension")

INFO = [
    f"sk:ints(int i, unsigned int u, long l, unsigned long long big, char c, short s)  {prog}",
    "    Integers of each width and sign. @param big the widest",
    f"sk:text(string path, void *ptr)  {prog}",
    f"sk:flags(bool yes, bool no, double d, float f)  {prog}",
    f"sk:unnamed(int, unsigned, string)  {prog}",
    f"sk:req__start(int fd, string path)  {prog}",
    f"sk:keywords(int function, long next, int arg2, int)  {prog}",
    f"sk:many(int a, int b, int c, int d, int e, int f, int g, int h)  {prog}",
    f"sk:empty()  {prog}",
]
STOPS = [
    "sk:ints i=-5 u=4000000000 l=-3000000000 big=18000000000000000000 c=-7 s=-1234",
    'sk:text path="hello" ptr=0x1234',
    "sk:flags yes=true no=false d=2.5 f=1.5",
    'sk:unnamed arg1=7 arg2=8 arg3="x"',
    "sk:many a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8",
]

commands = ["echo ==info\\n", "info probekit",
            "echo ==pattern\\n", "info probekit sk:req-*",
            "echo ==none\\n", "info probekit nosuch:*",
            "echo ==break\\n"]
commands += [f"probekit break {s.split()[0]}" for s in STOPS] + ["run 1 0"]
for _ in STOPS:
    commands += ["echo ==args\\n", "probekit args", "continue"]
commands += ["probekit args", "probekit break nocolon"]
argv = ["gdb", "-nx", "-batch", "-x", EXTENSION]
for c in commands:
    argv += ["-ex", c]
r = run(argv + [prog], cwd=d, timeout=300)
sections = {}
for chunk in r.stdout.split("==")[1:]:
    name, _, body = chunk.partition("\n")
    sections.setdefault(name, []).append([l for l in body.splitlines() if l.startswith(("sk:", "    ", "No "))])


def same(got, want, what):
    expect(got == want, what + ("" if got == want else "\n  got:  " + "\n        ".join(map(str, got))
                                + "\n  want: " + "\n        ".join(map(str, want))))


same(sections.get("info", [[]])[0], INFO, "info probekit: every probe, argument names and types, the doc comment")
same(sections.get("pattern", [[]])[0], [INFO[5]], "info probekit sk:req-*: the pattern matches req__start")
same(sections.get("none", [[]])[0], ["No probekit probes matching nosuch:*."], "info probekit with no match says so")
# Each stop prints its line (the breakpoint), then `probekit args` prints it again.
hits = [l for name in ("break", "args") for chunk in sections.get(name, []) for l in chunk]
same(hits, [line for stop in STOPS for line in (stop, stop)],
     "probekit break stops at each probe and prints its arguments by name, exactly; probekit args prints them again")
expect("fired 1" in r.stdout and "exited normally" in r.stdout, "the program ran to its end")
expect("The program is not running." in r.stderr, "probekit args without a process says so")
expect("usage: probekit break PROVIDER:NAME" in r.stderr, "probekit break without PROVIDER:NAME prints its usage")
expect("Python Exception" not in r.stderr and "Traceback" not in r.stderr, "no Python error" +
       ("" if "Traceback" not in r.stderr else f"\n{r.stderr[-2000:]}"))
finish()
