"""`meson install`, then an outside project built against the installed tree.

Installs this build (no rebuild) into a temporary DESTDIR and checks that
every installed part is where users look for it: the tools, the headers,
libprobekit (shared and static), probekit.pc, the CMake package, one man
page per subcommand that `probekit --help` lists, the gdb extension and the
stap scripts. Then builds the project of docs/getting-started.md -- its
files taken from the guide as written -- twice: with meson (pkg-config, and
a custom_target running the installed `probekit compile`) and with CMake
(find_package(probekit), probekit_compile(), probekit::probekit). Each
program must print what the guide says it prints, link the installed
libprobekit, and carry exactly the guide's probes (`probekit list`); editing
probes.d must regenerate the header on the next build. A third CMake build
uses probekit_compile()'s OUTPUT, OPTIONS and other formats and links
probekit::probekit_static; a bad FORMAT and a too-new version are refused.

When this build is sanitized, the outside builds get the same -fsanitize
flags (an instrumented libprobekit needs the sanitizer runtimes).
"""
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import common  # noqa: E402
from common import SOURCE_ROOT, expect, finish, need, run, tmpdir  # noqa: E402

MESON = os.environ.get("MESON", "meson")
BUILD_ROOT = os.environ["PROBEKIT_BUILD_ROOT"]
SANITIZE = os.environ.get("PROBEKIT_SANITIZE", "none")
GUIDE = os.path.join(SOURCE_ROOT, "docs", "getting-started.md")
PROBES = ["myapp:request__done(int fd, int status)", "myapp:request__start(int fd, string path)"]

need("cmake")
need("ninja")
need("pkg-config")


def guide_blocks():
    """{file name: text} for each fenced block the guide introduces with a
    line "`NAME`:", and the block after "`./myapp` prints" as "output"."""
    blocks, name, fence, body = {}, None, None, []
    for line in open(GUIDE).read().splitlines():
        if fence is not None:
            if line.strip() == "```":
                blocks[name] = "\n".join(body) + "\n"
                name, fence, body = None, None, []
            else:
                body.append(line[fence:])
        elif line.lstrip().startswith("```") and name:
            fence = len(line) - len(line.lstrip())
        elif m := re.fullmatch(r"`([\w./-]+)`:", line.strip()):
            name = m.group(1)
        elif line.strip() == "`./myapp` prints":
            name = "output"
    return blocks


def check(r, what):
    ok = r.returncode == 0
    expect(ok, what + ("" if ok else f": exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"))
    return ok


options = {o["name"]: o["value"] for o in json.loads(run([MESON, "introspect", "--buildoptions", BUILD_ROOT], check=True).stdout)}
version = json.loads(run([MESON, "introspect", "--projectinfo", BUILD_ROOT], check=True).stdout)["version"]
d = tmpdir()
stage = os.path.join(d, "stage")
r = run([MESON, "install", "-C", BUILD_ROOT, "--no-rebuild", "--destdir", stage], timeout=300)
if not check(r, "meson install --destdir"):
    finish()
root = stage + options["prefix"]


def at(option, *parts):
    return os.path.join(root, options[option], *parts)


probekit = at("bindir", "probekit")
subcommands = re.findall(r"^  (\w[\w-]*)  ", run([probekit, "--help"], check=True).stdout.split("Subcommands:")[-1], re.M)
expect(len(subcommands) >= 5, f"the installed probekit lists its subcommands: {subcommands}")
wanted = [at("bindir", "probekit"), at("bindir", "probekit-dtrace")] + \
    [at("includedir", "probekit", h) for h in ("marker.h", "runtime_abi.h", "runtime.h", "runtime.hpp")] + \
    [at("libdir", f) for f in ("libprobekit.so", "libprobekit.so.0", f"libprobekit.so.{version}", "libprobekit.a")] + \
    [at("libdir", "pkgconfig", "probekit.pc")] + \
    [at("libdir", "cmake", "probekit", f) for f in ("probekitConfig.cmake", "probekitConfigVersion.cmake", "probekitCompile.cmake")] + \
    [at("mandir", "man1", f"{page}.1") for page in ["probekit", "probekit-dtrace"] + [f"probekit-{s}" for s in subcommands]] + \
    [at("datadir", "probekit", "gdb", "probekit.py"), at("datadir", "systemtap", "tapset", "probekit", "probekit.stp")] + \
    [at("datadir", "probekit", "stap", f) for f in ("probe_hits.stp", "latency.stp", "top_args.stp")]
missing = [os.path.relpath(p, stage) for p in wanted if not os.path.exists(p)]
expect(not missing, f"installed: {len(wanted)} files (tools, headers, libraries, probekit.pc, CMake package, "
       f"{len(subcommands) + 2} man pages, gdb extension, stap tapset and scripts)" + (f"; missing: {missing}" if missing else ""))

env = dict(os.environ,
           PATH=at("bindir") + os.pathsep + os.environ["PATH"],
           PKG_CONFIG_PATH=at("libdir", "pkgconfig"),
           # probekit.pc names the real prefix; the staged tree is a sysroot to
           # pkg-config (prepended to -I, -L and variables)
           PKG_CONFIG_SYSROOT_DIR=stage,
           CMAKE_PREFIX_PATH=root,
           LD_LIBRARY_PATH=at("libdir"))
r = run(["pkg-config", "--static", "--libs", "probekit"], env=env)
expect(all(f in r.stdout.split() for f in ("-lprobekit", "-lstdc++", "-lurcu-bp", "-lurcu-common")),
       f"pkg-config --static --libs probekit names libprobekit's dependencies ({r.stdout.strip()})")
r = run(["pkg-config", "--variable=probekit", "probekit"], env=env)
expect(r.stdout.strip() == probekit, f"pkg-config --variable=probekit probekit names the installed compiler ({r.stdout.strip()})")

blocks = guide_blocks()
expect(sorted(blocks) == ["CMakeLists.txt", "main.c", "meson.build", "output", "probes.d"],
       f"docs/getting-started.md has probes.d, main.c, meson.build, CMakeLists.txt and the output ({sorted(blocks)})")


def write_project(tool):
    src = os.path.join(d, "src-" + tool)
    os.makedirs(src)
    for name, text in blocks.items():
        if name != "output":
            with open(os.path.join(src, name), "w") as f:
                f.write(text)
    return src


sanitize_flags = [] if SANITIZE == "none" else [f"-fsanitize={SANITIZE}"]
builds = {
    "meson": ([MESON, "setup", "@B@", "@S@"] + (["-Db_sanitize=" + SANITIZE, "-Db_lundef=false"] if sanitize_flags else []),
              ["ninja", "-C", "@B@"]),
    "cmake": (["cmake", "-S", "@S@", "-B", "@B@", "-G", "Ninja"] +
              ([f"-DCMAKE_C_FLAGS={sanitize_flags[0]}", f"-DCMAKE_EXE_LINKER_FLAGS={sanitize_flags[0]}"] if sanitize_flags else []),
              ["cmake", "--build", "@B@"]),
}
for tool, (configure, build) in builds.items():
    src, b = write_project(tool), os.path.join(d, "build-" + tool)
    if not check(run([a.replace("@B@", b).replace("@S@", src) for a in configure], env=env, timeout=300), f"[{tool}] configure the guide's project"):
        continue
    if not check(run([a.replace("@B@", b) for a in build], env=env, timeout=300), f"[{tool}] build it (probekit compile as a build step)"):
        continue
    prog = os.path.join(b, "myapp")
    r = run([prog], env=env)
    expect(r.returncode == 0 and r.stdout == blocks.get("output"),
           f"[{tool}] ./myapp prints what the guide says" + ("" if r.stdout == blocks.get("output") else f": {r.stdout!r} {r.stderr[-1500:]}"))
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(\S+)\]", run(["readelf", "-d", prog], check=True).stdout)
    expect("libprobekit.so.0" in needed, f"[{tool}] myapp links the installed libprobekit.so.0 ({needed})")
    r = run([probekit, "list", prog], env=env)
    listed = sorted(line.split("  ")[0] for line in r.stdout.splitlines() if line.strip())
    expect(listed == PROBES, f"[{tool}] probekit list: {listed}")
    # The header is a build step: an edited spec is compiled again.
    with open(os.path.join(src, "probes.d"), "a") as f:
        f.write("provider myapp_more { probe edited(int n); };\n")
    r = run([a.replace("@B@", b) for a in build], env=env, timeout=300)
    header = open(os.path.join(b, "myapp_probes.h")).read()
    expect(r.returncode == 0 and "MYAPP_MORE_EDITED" in header,
           f"[{tool}] editing probes.d regenerates myapp_probes.h on the next build")

# probekit_compile() with its other formats and options, libprobekit's
# static target, and what it refuses.
other = write_project("cmake-more")
with open(os.path.join(other, "CMakeLists.txt"), "w") as f:
    f.write("""cmake_minimum_required(VERSION 3.16)
project(myapp C)
find_package(probekit 0.1 REQUIRED)
add_executable(myapp main.c)
probekit_compile(myapp probes.d OUTPUT gen/probes.h OPTIONS --Werror)
probekit_compile(myapp probes.d FORMAT json)
probekit_compile(myapp probes.d FORMAT markdown OUTPUT doc/probes.md)
target_link_libraries(myapp PRIVATE probekit::probekit_static)
""")
# main.c includes the header by its new name, from the include path
# probekit_compile() adds (the build's gen/).
with open(os.path.join(other, "main.c")) as f:
    main_c = f.read().replace('#include "myapp_probes.h"', '#include "probes.h"')
with open(os.path.join(other, "main.c"), "w") as f:
    f.write(main_c)
b = os.path.join(d, "build-cmake-more")
if check(run([a.replace("@B@", b).replace("@S@", other) for a in builds["cmake"][0]], env=env, timeout=300),
         "[cmake] configure: probekit_compile() with OUTPUT, OPTIONS, FORMAT json and markdown; probekit::probekit_static") and \
        check(run(["cmake", "--build", b], env=env, timeout=300), "[cmake] build it"):
    r = run([os.path.join(b, "myapp")], env=env)
    expect(r.stdout == blocks.get("output"), "[cmake] myapp linked with the static libprobekit prints what the guide says"
           + ("" if r.stdout == blocks.get("output") else f": {r.stdout!r} {r.stderr[-1500:]}"))
    needed = run(["readelf", "-d", os.path.join(b, "myapp")], check=True).stdout
    expect("libprobekit" not in needed, "[cmake] probekit::probekit_static links libprobekit.a, not the shared library")
    manifest = json.load(open(os.path.join(b, "myapp_probes.json")))
    expect("request__start" in json.dumps(manifest) and "request__done" in json.dumps(manifest),
           "[cmake] FORMAT json wrote myapp_probes.json with both probes")
    page = open(os.path.join(b, "doc", "probes.md")).read()
    expect("A request was accepted." in page, "[cmake] FORMAT markdown OUTPUT doc/probes.md wrote the reference page with the docs")
with open(os.path.join(other, "CMakeLists.txt"), "a") as f:
    f.write("probekit_compile(myapp probes.d FORMAT stap)\n")
r = run(["cmake", "-S", other, "-B", os.path.join(d, "build-cmake-bad"), "-G", "Ninja"], env=env, timeout=300)
flat = " ".join(r.stderr.split())
expect(r.returncode != 0 and "probekit_compile: FORMAT must be header, json, gdb or markdown, not 'stap'" in flat,
       "probekit_compile(... FORMAT stap) is refused at configure time, saying why" + ("" if r.returncode else f": {r.stderr[-800:]}"))

# find_package checks the version: 0.x promises nothing across minor versions.
too_new = os.path.join(d, "too-new")
os.makedirs(too_new)
with open(os.path.join(too_new, "CMakeLists.txt"), "w") as f:
    f.write("cmake_minimum_required(VERSION 3.16)\nproject(too_new C)\nfind_package(probekit 9.0 REQUIRED)\n")
r = run(["cmake", "-S", too_new, "-B", os.path.join(too_new, "b"), "-G", "Ninja"], env=env, timeout=300)
flat = " ".join(r.stderr.split())
expect(r.returncode != 0 and 'compatible with requested version "9.0"' in flat and f"probekitConfig.cmake, version: {version}" in flat,
       "find_package(probekit 9.0) is refused, naming the installed version" + ("" if r.returncode else f": {r.stderr[-800:]}"))
if not common.failures:
    shutil.rmtree(d, ignore_errors=True)
else:
    print(f"kept {d} for a look")
finish()
