"""The shipped SystemTap scripts (stap/), through SystemTap's pass 2 against a
real program built from the script tests' spec (every kind of argument):

- examples/probe_hits.stp BINARY [SECONDS] resolves one probe per mark of
  the program (all 8), plus its timer when SECONDS is given;
- examples/latency.stp BINARY START DONE resolves exactly the two marks;
- examples/top_args.stp BINARY PROBE ARG [string] [N] resolves the one mark,
  reading the argument as text with `string`; an ARG the probe does not have
  is refused, naming it;
- tapset/probekit.stp: every helper typechecks when used on the aliases that
  `probekit compile --stap` generates for the same program.

Each resolves silently (stap warns only that the stub tree has no kernel
symbols). stap needs a kernel build tree even for pass 2; a stub is enough
(consumer_common.stub_kernel_tree). Running scripts (pass 5) is not
possible here, so the values they would print are not checked.
"""
import os
import re

from consumer_common import stub_kernel_tree
from script_program import build, generate
from common import NOTE_RE, SOURCE_ROOT, expect, finish, need, run, skip

need("stap")
need("gcc")

STAP = os.path.join(SOURCE_ROOT, "stap")
d, prog = build("stap-shipped")
kernel = stub_kernel_tree(d)
env = dict(os.environ, SYSTEMTAP_DIR=os.path.join(d, "systemtap-home"))
os.rename(generate(d, "stap", "--binary", prog), os.path.join(d, "sk.stp"))


def stap(*argv):
    r = run(["stap", "-r", kernel, "-I", os.path.join(STAP, "tapset"), "-I", d, "-p2", *argv], env=env, cwd=d, timeout=300)
    probes = r.stdout.split("# probes", 1)[-1].split("# functions", 1)[0]
    resolved = re.findall(r'^(process\("[^"]+"\)\.statement\(0x[0-9a-f]+\)|timer\.s\(\d+\)|end) ', probes, re.M)
    warnings = [l for l in r.stderr.splitlines() if "WARNING" in l and "Kernel function symbol table missing" not in l]
    return r, resolved, warnings


# What each mark must resolve to: its site, from readelf's reading of the note.
notes = run(["readelf", "-n", "--wide", prog], check=True).stdout
mark = {m.group(2): [f'process("{prog}").statement({hex(int(m.group(3), 16))})'] for m in NOTE_RE.finditer(notes)}
all_marks = [site for sites in mark.values() for site in sites]
r, resolved, _ = stap("-e", f'probe process("{prog}").mark("*") {{ println(pp()) }}')
if r.returncode != 0:
    skip(f"stap cannot resolve marks here, even with a stub kernel tree: {r.stderr.strip()[-600:]}")


def check(script, args, want, what):
    r, resolved, warnings = stap(os.path.join(STAP, "examples", script), *args)
    ok = r.returncode == 0 and sorted(resolved) == sorted(want) and not warnings
    expect(ok, f"{script} {' '.join(args)}: {what}" +
           ("" if ok else f"\n  resolved {resolved}\n  want     {want}\n{r.stderr.strip()[-1500:]}"))
    return r


expect(len(all_marks) == 8 and sorted(resolved) == sorted(all_marks), f"stap resolves the program's 8 marks where readelf shows them" + ("" if sorted(resolved) == sorted(all_marks) else f": {resolved}"))
check("probe_hits.stp", [prog], all_marks + ["end"], "one probe per mark of the program, and end")
check("probe_hits.stp", [prog, "5"], all_marks + ["timer.s(5)", "end"], "with SECONDS: its timer too")
check("latency.stp", [prog, "req__start", "many"], mark["req__start"] + mark["many"] + ["end"], "the start and the done mark")
r = check("top_args.stp", [prog, "text", "1", "string", "3"], mark["text"] + ["end"], "the one mark, its first argument as text")
expect("probekit_string:string" in r.stdout, "top_args.stp ... string reads the argument with probekit_string()")
r = check("top_args.stp", [prog, "ints", "6"], mark["ints"] + ["end"], "the one mark, its sixth argument as a number")
expect("probekit_string" not in r.stdout, "top_args.stp without string counts the number")
r, _, _ = stap(os.path.join(STAP, "examples", "top_args.stp"), prog, "ints", "7")
expect(r.returncode != 0 and "$arg7" in r.stderr, "top_args.stp refuses an argument the probe does not have, naming $arg7")

# The helpers on the generated aliases: strings, doubles, floats, durations, names.
uses = """
probe sk.text { println(probekit_string($arg1)) }
probe sk.flags { println(probekit_double(d), " ", probekit_float(f)) }
probe process(@1).mark("empty") { println(probekit_probe_name($$provider, $$name)) }
probe end { println(probekit_duration(1234567)) }
"""
r, resolved, warnings = stap("-e", uses, prog)
helpers = ["probekit_string", "probekit_double", "probekit_float", "probekit_probe_name", "probekit_duration"]
missing = [h for h in helpers if not re.search(rf"^{h}:string \(", r.stdout, re.M)]
expect(r.returncode == 0 and not missing and not warnings
       and sorted(resolved) == sorted(mark["text"] + mark["flags"] + mark["empty"] + ["end"]),
       "tapset/probekit.stp: every helper resolves and typechecks on the generated aliases"
       + ("" if r.returncode == 0 and not missing else f" (missing {missing})\n{r.stderr.strip()[-1500:]}"))
finish()
