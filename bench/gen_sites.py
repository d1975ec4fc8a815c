#!/usr/bin/env python3
"""Generate the probe-site compile benchmark: one provider file and one C++
translation unit per marker variant, all with the same code.

The TU has FUNCS functions with SITES sites each (default 200 x 100 = 20,000
sites). Every site first updates the function's locals, then fires one of
PROBES probes (2 or 3 arguments, computed from the locals). Only the marker
macro differs between the variants:

  none    no probes: the macro only casts each argument to void, so the
          arguments are still "used" (no warnings) and the code around the
          sites is identical; the compiler then drops the dead argument math.
  gated   probekit header, PROVIDER_NAME_GATED(...)
  plain   probekit header, PROVIDER_NAME(...)
  sdt     SystemTap `dtrace -h` header, PROVIDER_NAME(...) -> DTRACE_PROBEn
          -> sys/sdt.h STAP_PROBEn, with semaphores (_SDT_HAS_SEMAPHORES)
  sdt_gated  the same header, `if (PROVIDER_NAME_ENABLED()) PROVIDER_NAME(...)`:
          what a dtrace -h user writes to skip argument work
  call_gated no probe marker: `if (semaphore) extern_function(args)`, an
          ordinary call per probe behind the same kind of gate. What any gated
          form costs before its marker: the floor for `gated`.

Files written to OUTDIR: sites.d, none.h, call.h, sites_<variant>.cc. The headers
of the probekit and sdt variants (probekit.h, sdt.h) are produced from
sites.d by the calling script, with the tools being measured.
Deterministic for a given set of options.
"""
import argparse
import os
import random

from gen_spec import weighted  # the same seeded draw as the spec generator

# (spec type, weight, C++ type of the local it is computed from)
ARG_TYPES = [("int", 30), ("long", 10), ("unsigned long", 15), ("uint64_t", 20), ("const char *", 12),
             ("struct conn *", 8), ("double", 5)]

VARIANTS = ("none", "gated", "plain", "sdt", "sdt_gated", "call_gated")


# --plain-args: each argument is one of the function's locals as it is, so
# that what a variant adds over `none` is the probe itself, not the
# computation of its arguments (which `none` drops).
PLAIN_ARG = {"int": "a", "long": "l", "unsigned long": "b", "uint64_t": "h", "const char *": "s",
             "struct conn *": "c", "double": "d"}


def arg_expr(rng, t, k):
    """An argument of type t computed from the locals a (int), b (unsigned long),
    h (uint64_t), s (const char *), c (struct conn *)."""
    if t == "int":
        return rng.choice(["a", f"a + {k}", f"a ^ {k}", "a * 3", f"(int)(b & {k | 1})"])
    if t == "long":
        return rng.choice(["(long)b - a", f"(long)a * {k + 2}", "(long)(h >> 7)"])
    if t == "unsigned long":
        return rng.choice(["b", f"b + {k}", "b >> 3", "b * a"])
    if t == "uint64_t":
        return rng.choice(["h", f"h ^ {k}u", "h + b", "h >> (a & 31)"])
    if t == "const char *":
        return rng.choice(["s", "s + (a & 3)"])
    if t == "struct conn *":
        return "c"
    if t == "double":
        return rng.choice(["a * 0.5", "(double)b / (h | 1)"])
    raise ValueError(t)


def generate(outdir, funcs, sites, nprobes, seed, provider, work=False, plain_args=False):
    rng = random.Random(seed)
    P = provider.upper()
    probes = []
    for i in range(nprobes):
        n = 2 if rng.random() < 0.5 else 3
        probes.append((f"site__p{i}", [weighted(rng, ARG_TYPES) for _ in range(n)]))

    with open(os.path.join(outdir, "sites.d"), "w") as f:
        f.write(f"/* {nprobes} probes for bench/gen_sites.py (seed {seed}) */\nstruct conn;\n\nprovider {provider} {{\n")
        for name, types in probes:
            args = ", ".join(f"{t}{'' if t.endswith('*') else ' '}x{j + 1}" for j, t in enumerate(types))
            f.write(f"    probe {name}({args});\n")
        f.write("};\n")

    def macro(name):
        return f"{P}_{name.replace('__', '_').upper()}"

    # Baseline: same macro names, arguments cast to void.
    with open(os.path.join(outdir, "none.h"), "w") as f:
        f.write("/* No probes: every marker only uses its arguments. */\n")
        for name, types in probes:
            ps = ", ".join(f"x{j + 1}" for j in range(len(types)))
            body = ", ".join(f"(void)(x{j + 1})" for j in range(len(types)))
            f.write(f"#define {macro(name)}({ps}) ({body})\n")

    # The floor of a gated form: an ordinary function call behind a gate.
    with open(os.path.join(outdir, "call.h"), "w") as f:
        f.write("/* No marker: a gated call to an ordinary extern function per probe. */\n")
        f.write("#include <stdint.h>\nstruct conn;\n")
        for name, types in probes:
            ps = ", ".join(f"x{j + 1}" for j in range(len(types)))
            f.write(f'extern "C" volatile unsigned int {provider}_{name}_semaphore;\n')
            f.write(f'extern "C" void {provider}_{name}_call({", ".join(types)});\n')
            f.write(f"#define {macro(name)}({ps}) do {{ if (__builtin_expect({provider}_{name}_semaphore != 0, 0)) "
                    f"{provider}_{name}_call({ps}); }} while (0)\n")

    # The body shared by every variant; @FIRE(M, args)@ is filled per variant.
    body = []
    for fi in range(funcs):
        body.append(f"unsigned long bench_fn{fi}(int x, unsigned long y, const char *s, struct conn *c) {{\n")
        body.append(f"  int a = x + {fi}; unsigned long b = y * 3 + {fi}; uint64_t h = b ^ 0x9e3779b97f4a7c15ull;\n")
        if plain_args:
            body.append("  long l = (long)b - a; double d = a * 0.5;\n")
        for si in range(sites):
            k = rng.randrange(1, 1000)
            name, types = probes[rng.randrange(nprobes)]
            args = ", ".join(PLAIN_ARG[t] if plain_args else arg_expr(rng, t, k) for t in types)
            if work:
                body.append(f"  a = (int)((unsigned)a * 7u + {k}u); b += (unsigned long)a; h ^= b << {1 + k % 13};\n")
            body.append(("@", macro(name), args))
        body.append("  return (unsigned long)a + b + h" + (" + (unsigned long)l + (unsigned long)d" if plain_args else "") + ";\n}\n\n")

    fire = {
        "none": lambda m, a: f"  {m}({a});\n",
        "gated": lambda m, a: f"  {m}_GATED({a});\n",
        "plain": lambda m, a: f"  {m}({a});\n",
        "sdt": lambda m, a: f"  {m}({a});\n",
        "sdt_gated": lambda m, a: f"  if ({m}_ENABLED()) {m}({a});\n",
        "call_gated": lambda m, a: f"  {m}({a});\n",
    }
    header = {"none": "none.h", "gated": "probekit.h", "plain": "probekit.h", "sdt": "sdt.h", "sdt_gated": "sdt.h",
              "call_gated": "call.h"}
    for v in VARIANTS:
        with open(os.path.join(outdir, f"sites_{v}.cc"), "w") as f:
            f.write(f"// {funcs * sites} probe sites, variant '{v}' (bench/gen_sites.py)\n")
            f.write("#include <stdint.h>\n")
            f.write(f'#include "{header[v]}"\n\nstruct conn;\n\n')
            for piece in body:
                f.write(fire[v](piece[1], piece[2]) if isinstance(piece, tuple) else piece)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--funcs", type=int, default=200)
    ap.add_argument("--sites", type=int, default=100, help="sites per function")
    ap.add_argument("--probes", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--provider", default="bench")
    ap.add_argument("--work", action="store_true",
                    help="update the locals before every site (a heavier baseline: more code per site)")
    ap.add_argument("--plain-args", action="store_true",
                    help="pass locals as they are: the variants then differ by the probe alone")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    generate(a.outdir, a.funcs, a.sites, a.probes, a.seed, a.provider, a.work, a.plain_args)


if __name__ == "__main__":
    main()
