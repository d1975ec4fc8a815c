#!/usr/bin/env python3
"""Summarize a hyperfine --export-json file, and stamp it with where it ran.

    report.py RESULT.json --ref NAME [--inverse] [--meta KEY=VALUE ...]

Prints one line per command: wall-clock mean ± stddev, min, and the ratio
against the reference command NAME (mean / reference mean, with the stddev
propagated); then the mean CPU time (user + system) and its ratio, which
other work on the machine disturbs less than wall time.
With --inverse the ratio is reference / command (how many times faster the
reference is than each command). --meta adds a "meta" object to the JSON
(machine, date, commit, load average, plus the KEY=VALUE pairs) so the file
says by itself where its numbers come from. The per-run "times" arrays are
kept; nothing else is added, so the files stay small.
"""
import argparse
import json
import math
import os
import platform
import subprocess


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:
        return ""


def machine(root):
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    commit = sh(f"git -C '{root}' rev-parse --short HEAD")
    dirty = sh(f"git -C '{root}' status --porcelain --untracked-files=no -- src include tools meson.build")
    return {
        "date": sh("date -u +%Y-%m-%d"),
        "nproc": os.cpu_count(),
        "cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip(),
        "kernel": platform.release(),
        "gcc": sh("gcc --version | head -1"),
        "python": platform.python_version(),
        "hyperfine": sh("hyperfine --version"),
        "loadavg_at_end": load,
        "probekit_commit": commit + ("+dirty" if dirty else ""),
    }


def ratio(a, sa, b, sb):
    r = a / b
    return r, r * math.sqrt((sa / a) ** 2 + (sb / b) ** 2)


def fmt_t(s):
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--ref", required=True, help="command name the others are compared with")
    ap.add_argument("--inverse", action="store_true", help="print ref/command instead of command/ref")
    ap.add_argument("--meta", nargs="*", default=None, help="stamp the file with machine info and KEY=VALUE pairs")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args()

    with open(a.json) as f:
        data = json.load(f)
    res = {r["command"]: r for r in data["results"]}
    if a.ref not in res:
        raise SystemExit(f"{a.json}: no command named {a.ref!r} (have {', '.join(res)})")
    ref = res[a.ref]
    label = f"{a.ref}/cmd" if a.inverse else f"cmd/{a.ref}"
    print(f"  {'command':<18} {'wall: mean ± stddev':>24} {'min':>9} {'ratio':>14}   {'CPU (user+sys)':>14} {'ratio':>7}")
    ref_cpu = ref["user"] + ref["system"]
    for name, r in res.items():
        sd = r.get("stddev") or 0.0
        rsd = ref.get("stddev") or 0.0
        cpu = r["user"] + r["system"]
        if a.inverse:
            q, dq = ratio(ref["mean"], rsd, r["mean"], sd)
            qc = ref_cpu / cpu
        else:
            q, dq = ratio(r["mean"], sd, ref["mean"], rsd)
            qc = cpu / ref_cpu
        print(f"  {name:<18} {fmt_t(r['mean']):>12} ± {fmt_t(sd):<9} {fmt_t(r['min']):>9} {q:7.2f} ± {dq:<5.2f}"
              f"   {fmt_t(cpu):>14} {qc:7.2f}")
    print(f"  (ratio = {label}; {len(ref.get('times') or [])} runs of the reference)")

    if a.meta is not None:
        meta = machine(a.root)
        for kv in a.meta:
            k, _, v = kv.partition("=")
            meta[k] = v
        data["meta"] = meta
        with open(a.json, "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        print(f"  ({meta['date']}, {meta['nproc']} cores, {meta['kernel']}, {meta['gcc']}, "
              f"load {meta['loadavg_at_end']}, probekit {meta['probekit_commit']})")


if __name__ == "__main__":
    main()
