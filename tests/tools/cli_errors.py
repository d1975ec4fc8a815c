"""Bad input to `probekit compile` and `probekit-dtrace`: a file:line:col
error on stderr, exit status 1, and no output file, for each of the malformed
specs SystemTap's dtrace accepts (or loops on)."""
import os

from common import PROBEKIT, PROBEKIT_DTRACE, expect, finish, run, tmpdir

MALFORMED = {
    "missing_semicolon": ("provider p {\n  probe a(int)\n  probe b(int);\n};\n",
                          "missing_semicolon.d:3:3: error: expected ';' after the declaration of probe 'a', found 'probe'"),
    "duplicate_probe": ("provider p {\n  probe a(int);\n  probe a(long);\n};\n",
                        "duplicate_probe.d:3:3: error: probe 'a' is declared twice in provider 'p' (first at "),
    "duplicate_provider": ("provider p { probe a(); };\nprovider p { probe b(); };\n",
                           "duplicate_provider.d:2:1: error: provider 'p' is declared twice (first at "),
    "thirteen_args": ("provider p {\n  probe a(int,int,int,int,int,int,int,int,int,int,int,int,int);\n};\n",
                      "thirteen_args.d:2:3: error: probe 'p:a' has 13 arguments; at most 12 are supported"),
    "invalid_type": ("provider p {\n  probe a(unsigned double x);\n};\n",
                     "invalid_type.d:2:11: error: 'unsigned double' is not a valid type"),
    "unclosed_comment": ("provider p {\n  /* never closed\n  probe a();\n};\n",
                         "unclosed_comment.d:2:3: error: unterminated /* comment"),
    "missing_brace": ("provider p {\n  probe a();\n", "missing_brace.d:1:1: error: provider 'p' is not closed: missing '}'"),
    "missing_paren": ("provider p {\n  probe a(int;\n};\n", "missing_paren.d:2:14: error: missing ')' to close the arguments of probe 'a'"),
    "binary_garbage": ("\x7fELF\x02\x01\x01\x00\x00", "binary_garbage.d:1:1: error: unexpected byte 0x7f in input"),
    "bad_identifier": ("provider p { probe req-start(); };\n", "bad_identifier.d:1:20: error: bad identifier starting 'req-'"),
}

d = tmpdir()
for name, (text, message) in MALFORMED.items():
    spec = os.path.join(d, name + ".d")
    with open(spec, "w", encoding="latin-1") as f:
        f.write(text)
    for tool, argv, out in (
        ("probekit compile", [PROBEKIT, "compile", name + ".d", "-o", name + ".h"], name + ".h"),
        ("probekit compile --format json", [PROBEKIT, "compile", "--format", "json", name + ".d", "-o", name + ".json"], name + ".json"),
        ("probekit-dtrace -h", [PROBEKIT_DTRACE, "-h", "-s", name + ".d", "-o", name + ".dt.h"], name + ".dt.h"),
        ("probekit-dtrace -G", [PROBEKIT_DTRACE, "-G", "-s", name + ".d", "-o", name + ".o"], name + ".o"),
    ):
        r = run(argv, cwd=d)
        expect(r.returncode == 1, f"{tool} {name}: exit status 1 (got {r.returncode})")
        expect(r.stderr.startswith(message), f"{tool} {name}: stderr starts with {message!r} (got {r.stderr.strip()!r})")
        expect(not os.path.exists(os.path.join(d, out)), f"{tool} {name}: no output file")
        expect(r.stdout == "", f"{tool} {name}: nothing on stdout")
    leftovers = [f for f in os.listdir(d) if ".tmp" in f]
    expect(not leftovers, f"{name}: no temporary files left ({leftovers})")

# An unknown type is a warning (real specs name application types), and an
# error under --Werror.
spec = os.path.join(d, "unknown.d")
with open(spec, "w") as f:
    f.write("provider p {\n  probe a(mystery_t m);\n};\n")
r = run([PROBEKIT, "compile", "unknown.d", "-o", "unknown.h"], cwd=d)
expect(r.returncode == 0 and "unknown.d:2:11: warning: unknown type 'mystery_t'" in r.stderr, "unknown type: warning, exit 0")
expect(os.path.exists(os.path.join(d, "unknown.h")), "unknown type: header written")
r = run([PROBEKIT, "compile", "--Werror", "unknown.d", "-o", "unknown2.h"], cwd=d)
expect(r.returncode == 1 and "unknown.d:2:11: error: unknown type 'mystery_t'" in r.stderr, "unknown type --Werror: error, exit 1")
expect(not os.path.exists(os.path.join(d, "unknown2.h")), "unknown type --Werror: no header")

# A failed run leaves an existing output untouched.
good = os.path.join(d, "keep.h")
with open(good, "w") as f:
    f.write("old")
r = run([PROBEKIT, "compile", "missing_semicolon.d", "-o", "keep.h"], cwd=d)
expect(open(good).read() == "old", "failed compile leaves an existing output file as it was")

# Files and usage.
r = run([PROBEKIT, "compile", "does-not-exist.d"], cwd=d)
expect(r.returncode == 1 and r.stderr.strip() == "does-not-exist.d: error: No such file or directory", f"missing spec: {r.stderr.strip()!r}")
r = run([PROBEKIT, "compile", d], cwd=d)
expect(r.returncode == 1 and "is a directory" in r.stderr, "directory as spec")
r = run([PROBEKIT, "compile", "unknown.d", "-o", "/nonexistent-dir/x.h"], cwd=d)
expect(r.returncode == 1 and "/nonexistent-dir/x.h" in r.stderr, "unwritable output is named in the error")
r = run([PROBEKIT, "compile", "--help"], cwd=d)
expect(r.returncode == 0 and "--format" in r.stdout and "Exit status" in r.stdout, "compile --help")
r = run([PROBEKIT], cwd=d)
expect(r.returncode != 0, "no subcommand is a usage error")
r = run([PROBEKIT, "compile", "unknown.d", "--format", "yaml"], cwd=d)
expect(r.returncode == 2 and "yaml" in r.stderr, "bad --format value is named (exit status 2, a usage error)")
r = run([PROBEKIT, "--version"], cwd=d)
expect(r.returncode == 0 and r.stdout.strip()[0].isdigit(), "--version")

r = run([PROBEKIT_DTRACE], cwd=d)
expect(r.returncode == 1 and "Usage" in r.stderr, "probekit-dtrace without arguments")
r = run([PROBEKIT_DTRACE, "-h"], cwd=d)
expect(r.returncode == 1 and "no provider file" in r.stderr, "probekit-dtrace -h without -s")
r = run([PROBEKIT_DTRACE, "-s", "unknown.d"], cwd=d)
expect(r.returncode == 1 and "one of -h or -G" in r.stderr, "probekit-dtrace without -h/-G")
r = run([PROBEKIT_DTRACE, "-h", "-s", "unknown.d", "--bogus"], cwd=d)
expect(r.returncode == 1 and "invalid option --bogus" in r.stderr, "probekit-dtrace invalid option")
r = run([PROBEKIT_DTRACE, "-h", "-s"], cwd=d)
expect(r.returncode == 1 and "needs a value" in r.stderr, "probekit-dtrace -s without value")
r = run([PROBEKIT_DTRACE, "--help"], cwd=d)
expect(r.returncode == 0 and "-G" in r.stdout, "probekit-dtrace --help")

finish()
