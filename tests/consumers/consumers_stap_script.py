"""`probekit compile --format stap`: the generated tapset, for a real program
built from a spec with every kind of argument, passes SystemTap's pass 2:

- `stap -L 'sk.*'` resolves every alias to its mark and lists the variables
  it binds, named after the arguments (`arg1`.. for unnamed ones, `function_`
  and `next_` for keywords), strings as `string`, the rest as `long`;
- `stap -p2` of a script that uses every alias and every variable resolves
  one probe per alias, with no warning.

stap wants a kernel build tree even for these passes; a stub is enough (see
consumer_common.stub_kernel_tree). Running the script (pass 5) is not possible here.
"""
import os
import re

from consumer_common import stub_kernel_tree
from script_program import STAP_ALIASES, build, generate
from common import expect, finish, need, run, skip

need("stap")
need("gcc")

d, prog = build("stap")
kernel = stub_kernel_tree(d)
env = dict(os.environ, SYSTEMTAP_DIR=os.path.join(d, "systemtap-home"))
tapsets = os.path.join(d, "tapset")
os.makedirs(tapsets)
os.rename(generate(d, "stap", "--binary", prog), os.path.join(tapsets, "sk.stp"))


def stap(*argv):
    return run(["stap", "-r", kernel, "-I", tapsets, *argv], env=env, cwd=d, timeout=300)


r = stap("-L", "sk.*")
if r.returncode != 0 and "sk." not in r.stdout and "parse" not in r.stderr:
    skip(f"stap cannot resolve marks here, even with a stub kernel tree: {r.stderr.strip()[-600:]}")
listed = {}
for line in r.stdout.splitlines():
    alias, *variables = line.split()
    listed[alias] = [v for v in variables if not v.startswith("$")]
expect(sorted(listed) == sorted(STAP_ALIASES), f"stap -L resolves every alias: {sorted(listed)}"
       + ("" if listed else f"\n{r.stderr.strip()[-1500:]}"))
STRINGS = {("sk.text", "path"), ("sk.unnamed", "arg3"), ("sk.req_start", "path")}
for alias, names in STAP_ALIASES.items():
    want = [f"{n}:{'string' if (alias, n) in STRINGS else 'long'}" for n in names] + ["argstr:string"]
    expect(listed.get(alias) == want, f"stap -L: {alias} binds {want}" + ("" if listed.get(alias) == want else f" (got {listed.get(alias)})"))

# Every alias and every variable used: pass 2 must resolve each, silently.
uses = "\n".join(f"probe {alias} {{ println({', '.join(names + ['argstr'])}) }}" for alias, names in STAP_ALIASES.items())
r = stap("-p2", "-e", uses)
probes = r.stdout.split("# probes", 1)[-1]
resolved = len(re.findall(r'^process\("' + re.escape(prog) + r'"\)', probes, re.M))
# The stub tree has no kernel symbols: stap warns about that, and that only.
warnings = [l for l in r.stderr.splitlines() if "WARNING" in l and "Kernel function symbol table missing" not in l]
expect(r.returncode == 0 and resolved == len(STAP_ALIASES) and not warnings,
       f"stap -p2 resolves {resolved} probes for the {len(STAP_ALIASES)} aliases, every variable used, no warning"
       + ("" if r.returncode == 0 and not warnings else f"\n{r.stderr.strip()[-1500:]}"))
finish()
