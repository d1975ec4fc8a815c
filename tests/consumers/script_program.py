"""Shared by the tests of `probekit compile --format stap|bpftrace|gdb`
(consumers_*_script.py): a spec with every kind of argument, unnamed ones,
`__` names and names SystemTap reserves, a C program built with its header
that fires every probe with known values, and the lines the generated gdb
and bpftrace scripts must print for them.

The program takes `ROUNDS DELAY_MS`: it fires every probe ROUNDS times,
sleeping DELAY_MS before each round, then prints `fired ROUNDS`.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))

from common import PROBEKIT, run, tmpdir  # noqa: E402

PROVIDER = "sk"

SPEC = r"""
provider sk {
    /** Integers of each width and sign. @param big the widest */
    probe ints(int i, unsigned int u, long l, unsigned long long big, char c, short s);
    probe text(string path, void *ptr);
    /* floats travel as their IEEE bits */
    probe flags(bool yes, bool no, double d, float f);
    probe unnamed(int, unsigned, string);
    probe req__start(int fd, string path);
    /* `function` and `next` are SystemTap keywords (renamed in the tapset) */
    probe keywords(int function, long next, int arg2, int);
    probe many(int a, int b, int c, int d, int e, int f, int g, int h);
    probe empty();
};
"""

PROGRAM = r"""#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sk_probes.h"

/* bpftrace's str() reads nothing from a page the process has not touched. */
static volatile size_t touched;
static void touch(const char *s) { touched += strlen(s); }

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 1, delay_ms = argc > 2 ? atoi(argv[2]) : 0;
    const char *hello = "hello", *x = "x", *page = "/index.html";
    touch(hello); touch(x); touch(page);
    for (int r = 0; r < rounds; ++r) {
        struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        SK_INTS(-5, 4000000000u, -3000000000L, 18000000000000000000ull, (char)-7, (short)-1234);
        SK_TEXT(hello, (void *)0x1234);
        SK_FLAGS(1, 0, 2.5, 1.5f);
        SK_UNNAMED(7, 8u, x);
        SK_REQ_START(3, page);
        SK_KEYWORDS(1, 2L, 3, 4);
        SK_MANY(1, 2, 3, 4, 5, 6, 7, 8);
        SK_EMPTY();
    }
    printf("fired %d\n", rounds);
    return 0;
}
"""

# What the generated gdb script prints per probe hit, in firing order.
EXPECTED = [
    "sk:ints i=-5 u=4000000000 l=-3000000000 big=18000000000000000000 c=-7 s=-1234",
    "sk:text path=hello ptr=0x1234",
    "sk:flags yes=1 no=0 d=0x4004000000000000 f=0x3fc00000",
    "sk:unnamed arg1=7 arg2=8 arg3=x",
    "sk:req__start fd=3 path=/index.html",
    "sk:keywords function=1 next=2 arg2=3 arg4=4",
    "sk:many a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8",
    "sk:empty",
]
# bpftrace 0.17 reads arg0..arg5 only: the script prints six and says so.
EXPECTED_BPFTRACE = [l if not l.startswith("sk:many") else "sk:many a=1 b=2 c=3 d=4 e=5 f=6 ..." for l in EXPECTED]

# The stap alias of each probe and the variables it must bind.
STAP_ALIASES = {
    "sk.ints": ["i", "u", "l", "big", "c", "s"],
    "sk.text": ["path", "ptr"],
    "sk.flags": ["yes", "no", "d", "f"],
    "sk.unnamed": ["arg1", "arg2", "arg3"],
    "sk.req_start": ["fd", "path"],
    "sk.keywords": ["function_", "next_", "arg2", "arg4"],
    "sk.many": list("abcdefgh"),
    "sk.empty": [],
}


def build(label):
    """Builds the program into a new directory; returns (directory, program path)."""
    d = tmpdir()
    spec = os.path.join(d, "sk.d")
    with open(spec, "w") as f:
        f.write(SPEC)
    run([PROBEKIT, "compile", spec, "-o", os.path.join(d, "sk_probes.h")], check=True)
    with open(os.path.join(d, "prog.c"), "w") as f:
        f.write(PROGRAM)
    prog = os.path.join(d, "prog")
    run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "prog.c", "-o", prog], cwd=d, check=True)
    print(f"[{label}] built {prog}")
    return d, prog


def generate(d, fmt, *extra):
    """`probekit compile --format FMT` of the spec; returns the script's path."""
    out = os.path.join(d, "sk" + {"stap": ".stp", "bpftrace": ".bt", "gdb": ".gdb"}[fmt])
    run([PROBEKIT, "compile", "--format", fmt, *extra, os.path.join(d, "sk.d"), "-o", out], check=True)
    return out
