"""The man pages generated at build time (man/gen_man.py): one for probekit,
one per subcommand that `probekit --help` lists (so a new subcommand that
gets no page fails here), one for probekit-dtrace; each renders with man(1)
and groff without a single warning, has its NAME line, and documents every
option its command's --help shows."""
import os
import re

from common import PROBEKIT, PROBEKIT_DTRACE, expect, finish, need, run

need("man")
need("groff")
MAN_DIR = os.environ["PROBEKIT_MAN_DIR"]

top = run([PROBEKIT, "--help"], check=True).stdout
subcommands = re.findall(r"^  (\w[\w-]*)  ", top.split("Subcommands:")[-1], re.M)
helps = {"probekit": top, "probekit-dtrace": run([PROBEKIT_DTRACE, "--help"], check=True).stdout}
for s in subcommands:
    helps[f"probekit-{s}"] = run([PROBEKIT, s, "--help"], check=True).stdout
pages = sorted(f[:-2] for f in os.listdir(MAN_DIR) if f.endswith(".1"))
expect(len(subcommands) >= 5 and pages == sorted(helps),
       f"one page per command: {pages} (subcommands in --help: {subcommands})")

env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8")
for page in sorted(helps):
    path = os.path.join(MAN_DIR, page + ".1")
    if not os.path.exists(path):
        continue
    r = run(["man", "--warnings", "-l", path], env=env)
    expect(r.returncode == 0 and not r.stderr.strip(), f"{page}(1) renders without warnings"
           + ("" if not r.stderr.strip() else f":\n{r.stderr.strip()[:1500]}"))
    # Justified text stretches spaces and hyphenates words across lines
    # (U+2010 at the break); options are written with minus signs.
    text = re.sub("\u2010\n\\s*", "", r.stdout).replace("\u2010", "-").replace("\u2212", "-")
    flat = re.sub(r"\s+", " ", text)
    expect(re.search(rf"NAME {re.escape(page)} - \S", flat) is not None, f"{page}(1) has its NAME line")
    options = sorted(set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", "\n".join(
        l for l in helps[page].splitlines() if re.match(r"  -", l)))))
    absent = [o for o in options if o not in flat]
    expect(options and not absent, f"{page}(1) documents its {len(options)} options" + (f"; missing {absent}" if absent else ""))
if "probekit" in helps:
    r = run(["man", "-l", os.path.join(MAN_DIR, "probekit.1")], env=env)
    flat = re.sub(r"\s+", " ", r.stdout)
    absent = [s for s in subcommands if f"probekit-{s}(1)" not in flat]
    expect(not absent, "probekit(1) refers to every subcommand's page" + (f"; missing {absent}" if absent else ""))
finish()
