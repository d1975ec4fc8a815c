#!/usr/bin/env python3
"""Man pages from the tools' own --help: probekit(1), one probekit-SUB(1) per
subcommand that `probekit --help` lists (so a new subcommand gets its page
with no change here), and probekit-dtrace(1).

usage: gen_man.py OUTDIR VERSION PROBEKIT PROBEKIT_DTRACE

The help texts are CLI11's (probekit) and hand-written (probekit-dtrace);
both are lines of the same few shapes, read by parse_help(): a title, a
`Usage:` line, `Section:` headers, two-space-indented `term  description`
entries with deeper-indented continuation lines, and free paragraphs. help2man
would need one invocation per subcommand and still not find the
subcommands, so this is written by hand; it is the whole converter.
"""
import os
import re
import shutil
import subprocess
import sys


def help_text(exe, argv0, args):
    # argv0 as the user types it: CLI11 prints argv[0] in the usage line.
    r = subprocess.run([argv0, *args, "--help"], executable=exe, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"gen_man.py: '{argv0} {' '.join(args)} --help' exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def parse_help(text):
    """(title, usage, [(section, [("entry", term, desc) | ("text", line)])])."""
    title, usage, sections = [], "", []
    current = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("Usage:"):
            usage = line[len("Usage:"):].strip()
        elif re.fullmatch(r"[A-Z][A-Za-z ]*:", line):
            current = (line[:-1].upper(), [])
            sections.append(current)
        elif re.match(r"  \S", line):
            if current is None or current[0] == "DESCRIPTION":
                current = ("OPTIONS", [])
                sections.append(current)
            term, _, desc = line.strip().partition("  ")
            current[1].append(["entry", term.strip(), desc.strip()])
        elif re.match(r"   ", line) and current and current[1] and current[1][-1][0] == "entry":
            entry = current[1][-1]
            entry[2] = (entry[2] + " " + line.strip()).strip()
        elif not usage:
            title.append(line.strip())
        else:
            # Free text: the description under the usage line, notes after
            # the entries (patterns, exit status).
            if current is None or current[0] not in ("DESCRIPTION", "NOTES"):
                current = ("NOTES" if current else "DESCRIPTION", [])
                sections.append(current)
            # A line of a wrapped paragraph continues it; "Exit status: ..."
            # and the like start a new one.
            items = current[1]
            if items and items[-1][0] == "text" and not re.match(r"[A-Z][a-z ]*: ", line):
                items[-1][1] += " " + line.strip()
            else:
                items.append(["text", line.strip()])
    if not title and sections and sections[0][0] == "DESCRIPTION":
        # probekit-dtrace: the one-line description follows the usage line.
        title = [sections[0][1].pop(0)[1]]
    title = re.sub(r"^[\w-]+: ", "", " ".join(title))  # "probekit: USDT probes ..."
    return title, usage, sections


def roff(text):
    """Escapes text for a roff body line."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in (".", "'") else text


def page(name, command, version, title, usage, sections, see_also):
    synopsis = usage[len(command):].strip() if usage.startswith(command) else usage
    out = [f'.TH {name.upper()} 1 "" "probekit {version}" "probekit manual"',
           ".SH NAME", f"{roff(name)} \\- {roff(title[:1].lower() + title[1:] if title[1:2].islower() else title)}",
           ".SH SYNOPSIS", f".B {roff(command)}", roff(synopsis),
           ".SH DESCRIPTION", roff(title if title.endswith(".") else title + ".")]
    for heading, items in sections:
        if heading != "DESCRIPTION":
            out.append(f".SH {heading}")
        for i, item in enumerate(items):
            if item[0] == "entry":
                out += [".TP", f".B {roff(item[1])}", roff(item[2])]
            else:
                out += [".PP" if heading == "DESCRIPTION" or i else "", roff(item[1])]
    out += [".SH SEE ALSO", ",\n".join(f".BR \\%{roff(p)} (1)" for p in see_also)]
    return "\n".join(line for line in out if line) + "\n"


def main():
    outdir, version, probekit, probekit_dtrace = sys.argv[1:]
    tmp = outdir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)

    title, usage, sections = parse_help(help_text(probekit, "probekit", []))
    subcommands = [e[1] for s in sections if s[0] == "SUBCOMMANDS" for e in s[1] if e[0] == "entry"]
    if not subcommands:
        sys.exit("gen_man.py: 'probekit --help' lists no subcommands")
    all_pages = ["probekit"] + [f"probekit-{s}" for s in subcommands] + ["probekit-dtrace"]
    for s in sections:
        if s[0] == "SUBCOMMANDS":
            for e in s[1]:
                e[2] = f"{e[2]}; see probekit-{e[1]}(1)."
    pages = {"probekit": page("probekit", "probekit", version, title, usage, sections,
                              [p for p in all_pages if p != "probekit"])}
    for sub in subcommands:
        t, u, s = parse_help(help_text(probekit, "probekit", [sub]))
        pages[f"probekit-{sub}"] = page(f"probekit-{sub}", f"probekit {sub}", version, t, u, s,
                                        [p for p in all_pages if p != f"probekit-{sub}"])
    t, u, s = parse_help(help_text(probekit_dtrace, "probekit-dtrace", []))
    pages["probekit-dtrace"] = page("probekit-dtrace", "probekit-dtrace", version, t, u, s,
                                    ["probekit", "probekit-compile"])
    for name, text in pages.items():
        with open(os.path.join(tmp, name + ".1"), "w") as f:
            f.write(text)
    # Replace the directory as a whole: a subcommand that went away leaves no page.
    shutil.rmtree(outdir, ignore_errors=True)
    os.rename(tmp, outdir)


main()
