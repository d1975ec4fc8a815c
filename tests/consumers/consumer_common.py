"""Shared pieces of the real-consumer tests (tests/consumers/consumers_*.py).

One spec (provider `ck`) whose probes carry known values of every supported
type, C/C++ programs that fire them, and a builder that compiles those
programs in many configurations (C and C++, gcc and clang, -O0..-O2, PIE and
non-PIE, shared library linked and dlopen'ed, LTO, the four linkers with and
without --gc-sections, COMDAT sites, -static) into a temporary directory,
in parallel. Every script builds the variants it needs once and runs all of
its checks on them.

The programs take `fire ROUNDS DELAY_MS` (fire every probe ROUNDS times,
sleeping DELAY_MS before each round) or `gate N DELAY_MS` (run the gated form
of ck:gated N times and print `gated_runs=K`, the number of times its
argument was built).
"""
import atexit
import concurrent.futures
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))

import common  # noqa: E402
from common import NOTE_RE, PROBEKIT, expect, finish, need, run, skip  # noqa: E402,F401

PROVIDER = "ck"

SPEC = r"""
/* Probes with known values of every supported type (tests/consumers). */
provider ck {
    probe ints(int8_t a, uint8_t b, int16_t c, uint16_t d, int32_t e, uint32_t f, int64_t g, uint64_t h);
    probe misc(bool b, char c, void *p, string s, const char *t, long neg);
    /* floats travel as their IEEE bits, as unsigned 4- and 8-byte integers */
    probe floats(float f, double d);
    /* a literal, a non-const global, a struct member, an expression over argc */
    probe sources(int constant, long global, int member, long expr);
    probe twelve(int, int, int, int, int, int, int, int, int, int, int, int);
    /* the 64-bit extremes again, within the six arguments bpftrace 0.17 reads */
    probe wide(int64_t lo, uint64_t hi, int64_t max);
    /* fired with the _GATED form only */
    probe gated(int n);
    /* fired from a C++ template and an inline function used by two units */
    probe comdat(int which, long value);
};
"""

# The sdt size prefix ([-]N@) of every argument, from the spec's types:
# what sys/sdt.h writes for the same arguments.
PREFIXES = {
    "ints": ["-1", "1", "-2", "2", "-4", "4", "-8", "8"],
    "misc": ["1", "-1", "8", "8", "8", "-8"],
    "floats": ["4", "8"],
    "sources": ["-4", "-8", "-4", "-8"],
    "twelve": ["-4"] * 12,
    "wide": ["-8", "8", "-8"],
    "gated": ["-4"],
    "comdat": ["-4", "-8"],
}
CXX_ONLY = {"comdat"}

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
# What one round of `fire` passes, per probe (strings as text).
VALUES = {
    "ints": [-5, 250, -1234, 65000, -100000, 4000000000, INT64_MIN, 18000000000000000000],
    "misc": [1, 120, 0x1234, "hello", "world", -3000000000],
    "floats": [0x3FC00000, 0xC002000000000000],  # 1.5f and -2.25
    "sources": [42, 123456789, -77, 4007],        # argc is 4
    "twelve": [1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12],
    "wide": [INT64_MIN, 18000000000000000000, INT64_MAX],
}
STRING_ARGS = {("misc", 3), ("misc", 4)}
# (which, value) pairs of ck:comdat in one round: from main and from fire.
COMDAT_FROM_MAIN = {(1, 101), (0, 201)}
COMDAT_FROM_LIB = {(1, 102), (0, 202)}
GATE_BASE = 1000   # ck:gated carries GATE_BASE + i in iteration i

API_H = r"""
#ifndef CK_API_H
#define CK_API_H
#ifdef __cplusplus
extern "C" {
#endif
void ck_run(int argc, int rounds, int delay_ms);
int ck_gate(int n, int delay_ms);
#ifdef __cplusplus
}
#include "ck.h"
/* COMDAT sites: both units instantiate these; the linker keeps one copy of
   each, and the notes of the discarded copies must go with them. */
template <int N> __attribute__((__noinline__)) void ck_tmpl(long v) { CK_COMDAT(N, v); }
__attribute__((__noinline__)) inline void ck_inl(long v) { CK_COMDAT(0, v); }
#endif
#endif
"""

FIRE_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "ck.h"
#include "ck_api.h"

long ck_global = 123456789;                  /* a non-const global */
struct ck_holder { int pad; int member; };
struct ck_holder ck_holder_v = { 1, -77 };
char ck_hello[] = "hello";
const char *volatile ck_world = "world";
static volatile int ck_gated_runs;

static int ck_count(int i) { ck_gated_runs++; return i; }

static void ck_sleep_ms(int ms) {
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  nanosleep(&ts, 0);
}

/* k is 1 at run time, but the compiler cannot know it: the values live in
   registers (of every width) as well as in immediates. */
__attribute__((__noinline__)) static void ck_fire_once(int argc) {
  int k = argc - 3;
  /* bpftrace reads strings without faulting pages in: touch them first. */
  volatile char touch = (char)(ck_hello[0] + ck_world[0]);
  (void)touch;
  CK_INTS(-4 - k, 249 + k, -1233 - k, 64999 + k, -99999 - k, 3999999999u + k, INT64_MIN + (k - 1),
          17999999999999999999ull + k);
  CK_MISC(k == 1, 'w' + k, (void *)(uintptr_t)(0x1233 + k), ck_hello, ck_world, -3000000000L * k);
  CK_FLOATS(1.5f * k, -2.25 * k);
  CK_SOURCES(42, ck_global, ck_holder_v.member, (long)argc * 1000 + 7);
  CK_TWELVE(k, -2 * k, 3 * k, -4, 5, -6, 7, -8, 9 * k, -10, 11, -12 * k);
  CK_WIDE(INT64_MIN + (k - 1), 17999999999999999999ull + k, INT64_MAX - (k - 1));
#ifdef __cplusplus
  ck_tmpl<1>(k + 101);
  ck_inl(k + 201);
#endif
}

void ck_run(int argc, int rounds, int delay_ms) {
  for (int r = 0; r < rounds; r++) {
    if (delay_ms) ck_sleep_ms(delay_ms);
    ck_fire_once(argc);
  }
}

int ck_gate(int n, int delay_ms) {
  for (int i = 0; i < n; i++) {
#ifdef __cplusplus
    CK_GATED_GATED([&] { return ck_count(i + 1000); });   /* a builder */
#else
    CK_GATED_GATED(ck_count(i + 1000));
#endif
    if (delay_ms) ck_sleep_ms(delay_ms);
  }
  return ck_gated_runs;
}
"""

MAIN_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ck_api.h"

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: %s fire|gate COUNT DELAY_MS\n", argv[0]); return 2; }
  int count = atoi(argv[2]), delay = atoi(argv[3]);
  if (strcmp(argv[1], "gate") == 0) {
    printf("gated_runs=%d\n", ck_gate(count, delay));
    return 0;
  }
  for (int r = 0; r < count; r++) {
    ck_run(argc, 1, delay);
#ifdef __cplusplus
    ck_tmpl<1>(argc - 3 + 100);
    ck_inl(argc - 3 + 200);
#endif
  }
  printf("fired %d\n", count);
  return 0;
}
"""

MAIN_DL_C = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: %s fire|gate COUNT DELAY_MS\n", argv[0]); return 2; }
  int count = atoi(argv[2]), delay = atoi(argv[3]);
  void *h = dlopen(CK_LIB, RTLD_NOW);
  if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 3; }
  void (*run)(int, int, int) = (void (*)(int, int, int))dlsym(h, "ck_run");
  int (*gate)(int, int) = (int (*)(int, int))dlsym(h, "ck_gate");
  if (!run || !gate) { fprintf(stderr, "dlsym: %s\n", dlerror()); return 3; }
  if (strcmp(argv[1], "gate") == 0) {
    printf("gated_runs=%d\n", gate(count, delay));
    return 0;
  }
  for (int r = 0; r < count; r++) run(argc, 1, delay);
  printf("fired %d\n", count);
  return 0;
}
"""

CXX = {"gcc": "g++", "clang": "clang++"}
LINKER_TOOL = {"bfd": "ld.bfd", "gold": "ld.gold", "lld": "ld.lld", "mold": "mold"}
GC_FLAGS = ("-ffunction-sections", "-fdata-sections")


@dataclass(frozen=True)
class Variant:
    """One way of building the test program."""
    lang: str                 # "c" or "c++"
    cc: str                   # "gcc" or "clang"
    opt: str = "-O2"
    kind: str = "exe"         # "exe", "shared" (linked library), "dlopen", "static"
    cflags: tuple = ()
    ldflags: tuple = ()
    linker: str = ""          # "", "bfd", "gold", "lld", "mold"
    gc: bool = False          # -ffunction-sections -fdata-sections -Wl,--gc-sections
    marker: str = "native"    # "native" or "sys-sdt"
    tag: str = ""             # extra words for the name

    @property
    def name(self):
        parts = [self.lang, self.cc, self.opt.lstrip("-")]
        if self.kind != "exe":
            parts.append(self.kind)
        if self.tag:
            parts.append(self.tag)
        if self.linker:
            parts.append("ld=" + self.linker)
        if self.gc:
            parts.append("gc")
        if self.marker != "native":
            parts.append(self.marker)
        return " ".join(parts)

    @property
    def dirname(self):
        # no '+': bpftrace cannot parse it in a probe's path
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", self.name.replace("c++", "cxx"))

    def sdt(self):
        """The same program with the markers of <sys/sdt.h>: the reference."""
        return replace(self, marker="sys-sdt")

    def probes(self):
        return [p for p in PREFIXES if self.lang == "c++" or p not in CXX_ONLY]


@dataclass
class Build:
    variant: Variant
    dir: str
    prog: str = ""
    lib: str = ""
    # ELF file -> the probes whose notes it must hold
    elfs: dict = field(default_factory=dict)
    error: str = ""           # the build failed: a test failure
    skipped: str = ""         # this machine cannot build it: not a failure
    seconds: float = 0.0

    @property
    def ok(self):
        return not self.error and not self.skipped


def _static_libs_present(lang):
    libs = ["libc.a"] + (["libstdc++.a"] if lang == "c++" else [])
    for lib in libs:
        r = run(["gcc", "-print-file-name=" + lib])
        if not os.path.isabs(r.stdout.strip()):
            return f"{lib} is not installed (no static libc)"
    return ""


class Builder:
    """Builds variants into one temporary directory, each at most once."""

    def __init__(self, label):
        self.root = common.tmpdir()
        self.label = label
        self.cache = {}
        for marker in ("native", "sys-sdt"):
            d = os.path.join(self.root, "hdr-" + marker)
            os.makedirs(d)
            with open(os.path.join(d, "ck.d"), "w") as f:
                f.write(SPEC)
            run([PROBEKIT, "compile", "ck.d", "-o", "ck.h", "--marker", marker], cwd=d, check=True)
        src = os.path.join(self.root, "src")
        os.makedirs(src)
        for name, text in (("ck_api.h", API_H), ("fire.c", FIRE_C), ("fire.cc", FIRE_C), ("main.c", MAIN_C),
                           ("main.cc", MAIN_C), ("main_dl.c", MAIN_DL_C)):
            with open(os.path.join(src, name), "w") as f:
                f.write(text)
        atexit.register(self._cleanup)

    def _cleanup(self):
        if os.environ.get("PROBEKIT_KEEP_TMP"):
            print(f"(build directory kept: {self.root})")
        else:
            if common.failures:
                print("(set PROBEKIT_KEEP_TMP=1 to keep the build directory)")
            shutil.rmtree(self.root, ignore_errors=True)

    def _why_not(self, v):
        if shutil.which(v.cc) is None:
            return f"{v.cc} is not installed"
        if v.lang == "c++" and shutil.which(CXX[v.cc]) is None:
            return f"{CXX[v.cc]} is not installed"
        if v.linker and shutil.which(LINKER_TOOL[v.linker]) is None:
            return f"{LINKER_TOOL[v.linker]} is not installed"
        if v.kind == "static":
            return _static_libs_present(v.lang)
        return ""

    def _build(self, v):
        d = os.path.join(self.root, v.dirname)
        b = Build(v, d)
        why = self._why_not(v)
        if why:
            b.skipped = why
            return b
        os.makedirs(d, exist_ok=True)
        t0 = time.monotonic()
        src = os.path.join(self.root, "src")
        hdr = os.path.join(self.root, "hdr-" + v.marker)
        cxx = v.lang == "c++"
        compiler = CXX[v.cc] if cxx else v.cc
        ext = "cc" if cxx else "c"
        base = [compiler, "-std=gnu++17" if cxx else "-std=gnu11", v.opt, *v.cflags, "-I", hdr, "-I", src]
        link = list(v.ldflags)
        if v.linker:
            link.append("-fuse-ld=" + v.linker)
        if v.gc:
            base += GC_FLAGS
            link.append("-Wl,--gc-sections")
        prog = os.path.join(d, "prog")
        lib = os.path.join(d, "libck.so")
        probes = v.probes()
        cmds = []
        if v.kind in ("exe", "static"):
            cmds.append(base + [f"{src}/main.{ext}", f"{src}/fire.{ext}", "-o", prog] + link
                        + (["-static"] if v.kind == "static" else []))
            b.elfs = {prog: probes}
        elif v.kind in ("shared", "dlopen"):
            cmds.append(base + ["-fPIC", "-shared", f"{src}/fire.{ext}", "-o", lib] + link)
            if v.kind == "shared":
                cmds.append(base + [f"{src}/main.{ext}", "-o", prog, "-L", d, "-lck", "-Wl,-rpath," + d] + link)
                b.elfs = {lib: probes, prog: [p for p in probes if p in CXX_ONLY]}
            else:
                cmds.append([v.cc, "-std=gnu11", v.opt, f'-DCK_LIB="{lib}"', f"{src}/main_dl.c", "-o", prog, "-ldl"])
                b.elfs = {lib: probes, prog: []}
            b.lib = lib
        else:
            raise ValueError(v.kind)
        for cmd in cmds:
            r = run(cmd, cwd=d)
            if r.returncode != 0:
                b.error = f"{' '.join(cmd)}\n{r.stderr[-3000:]}"
                break
        b.prog = prog
        b.seconds = time.monotonic() - t0
        return b

    def build(self, variants):
        """Build every variant (in parallel); returns {variant: Build}."""
        todo = [v for v in dict.fromkeys(variants) if v not in self.cache]
        t0 = time.monotonic()
        workers = max(2, os.cpu_count() or 2)
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            for v, b in zip(todo, pool.map(self._build, todo)):
                self.cache[v] = b
        if todo:
            print(f"[{self.label}] built {len(todo)} variants in {time.monotonic() - t0:.1f}s")
        return {v: self.cache[v] for v in variants}

    def check_built(self, b):
        """Records a failed build as a failure, prints a skip; True if usable."""
        if b.skipped:
            print(f"skip: {b.variant.name}: {b.skipped}")
            return False
        expect(not b.error, f"{b.variant.name}: builds" + (f"\n{b.error}" if b.error else ""))
        return not b.error


# ---------------------------------------------------------------------------
# Variant sets

def core_variants():
    """gcc and clang, C and C++, -O0/-O1/-O2, PIE executables."""
    return [Variant(lang, cc, opt) for cc in ("gcc", "clang") for lang in ("c", "c++")
            for opt in ("-O0", "-O1", "-O2")]


def nopie_variants():
    return [Variant("c", "gcc", "-O2", cflags=("-fno-pie",), ldflags=("-no-pie",), tag="nopie"),
            Variant("c++", "clang", "-O2", cflags=("-fno-pie",), ldflags=("-no-pie",), tag="nopie")]


def shared_variants():
    return [Variant("c++", "gcc", "-O2", kind="shared"), Variant("c", "clang", "-O0", kind="shared"),
            Variant("c", "gcc", "-O2", kind="dlopen")]


def lto_variants():
    # clang's LTO goes through lld (the bfd route needs the LLVMgold plugin).
    # gcc puts all top-level asm (.stapsdt.base, the .note.probekit entries
    # and descriptors) in its first LTO partition: one partition per
    # function proves that sites elsewhere still find them.
    return [Variant("c++", "gcc", "-O2", cflags=("-flto", "-flto-partition=max"), tag="lto"),
            Variant("c", "gcc", "-O2", cflags=("-flto",), tag="lto"),
            Variant("c", "clang", "-O2", cflags=("-flto",), linker="lld", tag="lto"),
            Variant("c++", "clang", "-O2", cflags=("-flto",), linker="lld", tag="lto")]


def linker_variants(gc_only=False):
    out = []
    for linker in ("bfd", "gold", "lld", "mold"):
        for gc in ((True,) if gc_only else (False, True)):
            out.append(Variant("c++", "gcc", "-O2", linker=linker, gc=gc))
            out.append(Variant("c", "clang", "-O2", linker=linker, gc=gc))
    return out


def static_variants():
    return [Variant("c", "gcc", "-O2", kind="static"), Variant("c++", "gcc", "-O2", kind="static")]


# ---------------------------------------------------------------------------
# ELF and note helpers

@dataclass
class Note:
    provider: str
    name: str
    location: int
    base: int
    semaphore: int
    args: list

    @property
    def prefixes(self):
        return [a.split("@", 1)[0] for a in self.args]


def notes(path):
    """Every .note.stapsdt entry of an ELF file, as readelf prints it."""
    out = run(["readelf", "-n", "--wide", path], check=True).stdout
    return [Note(m.group(1), m.group(2), int(m.group(3), 16), int(m.group(4), 16), int(m.group(5), 16),
                 m.group(6).split()) for m in NOTE_RE.finditer(out)]


@dataclass
class Section:
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int

    def contains(self, addr):
        return self.addr <= addr < self.addr + self.size


SHT_NOBITS = 8
SHF_ALLOC, SHF_EXECINSTR = 2, 4


class Elf:
    """Section headers and contents of a little-endian ELF64 file."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise ValueError(f"{path}: not a little-endian ELF64 file")
        shoff = struct.unpack_from("<Q", d, 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
        raw = []
        for i in range(shnum):
            o = shoff + i * shentsize
            name, typ = struct.unpack_from("<II", d, o)
            flags, addr, offset, size = struct.unpack_from("<QQQQ", d, o + 8)
            raw.append((name, typ, flags, addr, offset, size))
        stro = raw[shstrndx][4]
        self.sections = []
        for name, typ, flags, addr, offset, size in raw:
            end = d.index(b"\0", stro + name)
            self.sections.append(Section(d[stro + name:end].decode(), typ, flags, addr, offset, size))

    def section(self, name):
        for s in self.sections:
            if s.name == name:
                return s
        return None

    def code_at(self, addr, n):
        """n bytes of an executable section at a link-time address, or None."""
        for s in self.sections:
            if s.flags & SHF_EXECINSTR and s.flags & SHF_ALLOC and s.type != SHT_NOBITS and s.contains(addr):
                o = s.offset + addr - s.addr
                return self.data[o:o + n]
        return None


NOPS = (b"\x90", b"\x0f\x1f\x44\x00\x00")


def is_nop_site(elf, addr):
    code = elf.code_at(addr, 5)
    return code is not None and any(code.startswith(n) for n in NOPS)


# ---------------------------------------------------------------------------
# Running things

def run_prog(b, mode, count, delay=0, timeout=60):
    return run([b.prog, mode, str(count), str(delay)], timeout=timeout)


def gated_runs(text):
    m = re.search(r"gated_runs=(\d+)", text)
    return int(m.group(1)) if m else None


def parallel(fn, items, workers=None):
    """fn over items on a thread pool; results in order."""
    items = list(items)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers or max(2, os.cpu_count() or 2)) as pool:
        return list(pool.map(fn, items))


def stub_kernel_tree(root):
    """A directory stap -r accepts for listing marks (-L): no kernel build
    tree is needed to read .note.stapsdt, only what stap checks for."""
    d = os.path.join(root, "kernel-stub")
    os.makedirs(os.path.join(d, "include", "config"), exist_ok=True)
    with open(os.path.join(d, ".config"), "w") as f:
        f.write("CONFIG_TRACEPOINTS=y\nCONFIG_UPROBES=y\n")
    with open(os.path.join(d, "include", "config", "kernel.release"), "w") as f:
        f.write(os.uname().release + "\n")
    open(os.path.join(d, "Module.symvers"), "w").close()
    return d


class Timer:
    def __init__(self, label):
        self.label = label
        self.t0 = time.monotonic()

    def done(self):
        print(f"[{self.label}] total {time.monotonic() - self.t0:.1f}s")


TRACEFS = "/sys/kernel/tracing"


def bpftrace_clause(elf, name, strings=STRING_ARGS, max_args=6):
    """A bpftrace clause printing every hit of PROVIDER:name as a PKHIT line,
    tab-separated: `str()` for the (name, index) pairs in strings, signed or
    unsigned decimals by the argument's sdt prefix otherwise (bpftrace 0.17
    reads arg0..arg5 only)."""
    fmts, args = [], []
    for i, prefix in enumerate(PREFIXES[name][:max_args]):
        if (name, i) in strings:
            fmts.append("%s")
            args.append(f"str(arg{i})")
        else:
            fmts.append("%ld" if prefix.startswith("-") else "%lu")
            args.append(f"arg{i}")
    fmt = "PKHIT\\t" + name + "\\t" + "\\t".join(fmts) + "\\n"
    return f'usdt:{elf}:{PROVIDER}:{name} {{ printf("{fmt}", {", ".join(args)}); }}'


def need_bpftrace():
    """Skips (with the reason) unless bpftrace can attach uprobes here: root,
    tracefs mounted (mounted here if it is not), a BPF program that runs."""
    need("bpftrace")
    if os.geteuid() != 0:
        skip("bpftrace needs root to attach uprobes")
    if not os.path.exists(os.path.join(TRACEFS, "uprobe_events")):
        r = run(["mount", "-t", "tracefs", "nodev", TRACEFS])
        if not os.path.exists(os.path.join(TRACEFS, "uprobe_events")):
            skip(f"tracefs is not mounted at {TRACEFS} and mounting it failed: {r.stderr.strip()}")
    smoke = run(["bpftrace", "-e", 'BEGIN { printf("pk-smoke-ok\\n"); exit(); }'], timeout=120)
    if "pk-smoke-ok" not in smoke.stdout:
        skip(f"bpftrace cannot run BPF programs here: {smoke.stderr.strip()[-500:]}")


def attach_then_run(bpftrace_argv, prog_argv, timeout=300):
    """Starts bpftrace, waits until its BEGIN clause prints PKREADY (every
    probe attached), then runs the program, lets bpftrace print the last
    events and stops it. Used where `bpftrace -c` does not do: probes in a
    library the program has not loaded yet, or a script attaching many usdt
    probes (it can miss their first hits). Returns bpftrace's stdout, its
    stderr, its exit status, and the program's CompletedProcess (None when
    bpftrace never got ready)."""
    bt = subprocess.Popen(bpftrace_argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    out, err = [], []
    ready = threading.Event()

    def pump(stream, sink, watch):
        for line in stream:
            sink.append(line)
            if watch and line.startswith("PKREADY"):
                ready.set()

    threads = [threading.Thread(target=pump, args=(bt.stdout, out, True), daemon=True),
               threading.Thread(target=pump, args=(bt.stderr, err, False), daemon=True)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 120
    while not ready.is_set() and bt.poll() is None and time.monotonic() < deadline:
        ready.wait(0.1)
    prog = None
    if ready.is_set():
        time.sleep(0.3)
        prog = run(prog_argv, timeout=timeout)
        time.sleep(0.5)   # let bpftrace print the last events
    if bt.poll() is None:
        bt.send_signal(signal.SIGINT)
    try:
        bt.wait(timeout=60)
    except subprocess.TimeoutExpired:
        bt.kill()
        bt.wait()
    for t in threads:
        t.join(timeout=10)
    return "".join(out), "".join(err), bt.returncode, prog
