"""Every real provider file, compiled by `probekit compile` (C and C++) and by
`probekit-dtrace -h/-G`, into a program that fires every probe once: readelf
must show the same provider, name, argument count and semaphore presence for
every probe as SystemTap's own `dtrace -h/-G` gives for the same program."""
import json
import os
import shutil
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from common import PROBEKIT, PROBEKIT_DTRACE, corpus_files, expect, finish, need, run, stapsdt_notes, tmpdir

need("gcc")
need("g++")
need("readelf")
have_stap = shutil.which("dtrace") is not None
if not have_stap:
    print("note: SystemTap's dtrace is not installed; probekit's two tools are compared with each other only")

C_VALUE = {"signed": "1", "unsigned": "1", "char": "'c'", "bool": "1", "float": "1.5f", "double": "2.5",
           "pointer": "(void *)0", "string": '"s"', "opaque": "0"}
CXX_VALUE = dict(C_VALUE, pointer="nullptr", bool="true")


def program(manifest, header, values):
    calls = []
    for prov in manifest["providers"]:
        for p in prov["probes"]:
            args = ", ".join(values[a["kind"]] for a in p["args"])
            calls.append(f"  {p['macro']}({args});")
            calls.append(f"  if ({p['macro']}_ENABLED()) return 1;")
    return f'#include "{header}"\nint main(void) {{\n' + "\n".join(calls) + "\n  return 0;\n}\n"


def notes_of(binary):
    return Counter((prov, name, len(args.split()), sem != 0) for prov, name, args, sem in stapsdt_notes(binary))


def check(spec):
    base = os.path.basename(spec)
    d = tmpdir()
    try:
        r = run([PROBEKIT, "compile", "--format", "json", spec, "-o", os.path.join(d, "m.json")])
        if r.returncode != 0:
            return [(False, f"{base}: manifest ({r.stderr.strip()})")]
        manifest = json.load(open(os.path.join(d, "m.json")))
        expected = Counter((prov["name"], p["name"], len(p["args"]), True)
                           for prov in manifest["providers"] for p in prov["probes"])
        results = []
        builds = {}
        run([PROBEKIT, "compile", spec, "-o", os.path.join(d, "pk.h")], check=True)
        for lang, compiler, std, values in (("c", "gcc", "-std=c11", C_VALUE), ("cc", "g++", "-std=c++17", CXX_VALUE)):
            src = os.path.join(d, f"pk_main.{lang}")
            with open(src, "w") as f:
                f.write(program(manifest, "pk.h", values))
            exe = os.path.join(d, f"pk_{lang}")
            r = run([compiler, std, "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-value", src, "-o", exe], cwd=d)
            if r.returncode != 0:
                results.append((False, f"{base}: probekit header builds with {compiler} {std}\n{r.stderr[:3000]}"))
                continue
            builds[f"probekit compile ({compiler})"] = exe
        tools = [("probekit-dtrace", [PROBEKIT_DTRACE])]
        if have_stap:
            tools.append(("SystemTap dtrace", ["dtrace"]))
        for label, tool in tools:
            h, o, exe = (os.path.join(d, f"{label.split()[0]}.{x}") for x in ("h", "o", "exe"))
            run(tool + ["-h", "-s", spec, "-o", h], check=True)
            run(tool + ["-G", "-s", spec, "-o", o], check=True)
            src = os.path.join(d, f"{label.split()[0]}_main.c")
            with open(src, "w") as f:
                f.write(program(manifest, os.path.basename(h), C_VALUE))
            r = run(["gcc", "-O2", src, o, "-o", exe], cwd=d)
            if r.returncode != 0:
                results.append((False, f"{base}: {label} header builds\n{r.stderr[:3000]}"))
                continue
            builds[label] = exe
        for label, exe in builds.items():
            got = notes_of(exe)
            results.append((got == expected, f"{base}: {label}: {sum(got.values())} notes match the spec's {sum(expected.values())} probes"
                            + ("" if got == expected else f"\n  missing {expected - got}\n  extra {got - expected}")))
            r = run([exe])
            results.append((r.returncode == 0, f"{base}: {label}: program runs, no probe enabled"))
        return results
    finally:
        shutil.rmtree(d, ignore_errors=True)


with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    for results in pool.map(check, corpus_files()):
        for ok, what in results:
            expect(ok, what)
finish()
