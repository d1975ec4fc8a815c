#!/usr/bin/env python3
"""Draws the benchmark comparisons in docs/img/*.png from bench/results/
(gnuplot, Debian package gnuplot-nox). Only redraws: cheap, no benchmark is
run (bench/run_all.sh runs them, then calls this).

    bench/draw_charts.py [--results DIR] [--out DIR]

One chart per comparison in docs/benchmarks.md; probekit's bars are blue,
its peers' grey, each bar labelled with its figure, each panel titled with
the ratio. A results file that is missing is reported and its chart skipped,
so the others are still drawn (exit 1 at the end).
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROBEKIT_COLOR, PEER_COLOR = "0x2a6fdb", "0x9a9a9a"


def fmt_seconds(s):
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def hyperfine(path):
    """{command: mean seconds} of a hyperfine --export-json file."""
    with open(path) as f:
        return {r["command"]: r["mean"] for r in json.load(f)["results"]}


def fmt_ratio(r):
    return f"{r:.1f}x" if r < 10 else f"{r:.0f}x"


class Panel:
    """One bar chart: bars of (label, value, figure, ratio text or "", is probekit)."""

    def __init__(self, title, ylabel, bars, log=False):
        self.title, self.ylabel, self.bars, self.log = title, ylabel, bars, log

    def gnuplot(self, name):
        rows = "\n".join(f'"{label}" {value!r} "{text}" "{ratio}" {PROBEKIT_COLOR if ours else PEER_COLOR}'
                          for label, value, text, ratio, ours in self.bars)
        top = max(bar[1] for bar in self.bars)
        lo = min(bar[1] for bar in self.bars)
        yrange = f"[{lo / 3}:{top * 12}]" if self.log else f"[0:{top * 1.3}]"
        return f"""
${name} << EOD
{rows}
EOD
set title "{self.title}" noenhanced
set ylabel "{self.ylabel}" noenhanced
{"set logscale y" if self.log else "unset logscale y"}
set yrange {yrange}
plot ${name} using 0:2:5:xtic(1) with boxes lc rgb variable notitle, \\
     ${name} using 0:2:3 with labels offset 0,1.7 noenhanced notitle, \\
     ${name} using 0:2:4 with labels offset 0,0.7 noenhanced notitle
"""


def draw(path, panels, height=460):
    width = sum(120 + 115 * max(3, len(p.bars)) for p in panels)
    script = f"""set terminal pngcairo size {width},{height} font "DejaVu Sans,10" noenhanced
set output "{path}"
set style fill solid 0.9 border -1
set boxwidth 0.6
set xtics nomirror noenhanced
set ytics nomirror
set border 3
set grid ytics lc rgb "0xdddddd"
set offsets 0.5, 0.5, 0, 0
set multiplot layout 1,{len(panels)}
""" + "".join(p.gnuplot(f"d{i}") for i, p in enumerate(panels)) + "unset multiplot\n"
    r = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True)
    if r.returncode != 0 or r.stderr.strip():
        raise RuntimeError(f"gnuplot failed on {path}: {r.stderr.strip()}")


# ---- the charts: one function per comparison, reading its results ----

def header_generation(res):
    panels = []
    for size, label in (("2k", "2,000"), ("20k", "20,000")):
        t = hyperfine(os.path.join(res, f"compile_speed_{size}.json"))
        ours, peer = t["probekit compile"], t["dtrace -h"]
        panels.append(Panel(f"header for a {label}-probe spec", "seconds (log)",
                            [("probekit compile", ours, fmt_seconds(ours), "", True),
                             ("dtrace -h", peer, fmt_seconds(peer), fmt_ratio(peer / ours), False)], log=True))
    return panels


def site_compile(res):
    panels = []
    order = ["none", "plain", "gated", "call_gated", "sdt", "sdt_gated"]
    for file, label in (("site_compile.json", "20,000 sites"), ("site_compile_computed.json", "20,000 sites, computed arguments")):
        t = hyperfine(os.path.join(res, file))
        base = t["none"]
        bars = [(name, t[name], f"{t[name]:.3g} s", fmt_ratio(t[name] / base) if name != "none" else "", name in ("plain", "gated"))
                for name in order if name in t]
        panels.append(Panel(f"gcc -O2, {label} (x: against none)", "seconds", bars))
    return panels


def list_speed(res):
    t = hyperfine(os.path.join(res, "list_speed_20k.json"))
    ours = t.pop("probekit list -v --format json")
    bars = [("probekit list", ours, fmt_seconds(ours), "", True)] + \
        [(name, v, fmt_seconds(v), fmt_ratio(v / ours), False) for name, v in sorted(t.items(), key=lambda kv: kv[1])]
    big = hyperfine(os.path.join(res, "list_speed_200k.json"))
    ours_big = big["probekit list -v --format json (200k)"]
    peer_big = big["readelf -n (200k)"]
    return [Panel("listing 20,000 probe sites (x: against probekit)", "seconds (log)", bars, log=True),
            Panel("listing 200,000 probe sites", "seconds",
                  [("probekit list", ours_big, fmt_seconds(ours_big), "", True),
                   ("readelf -n", peer_big, fmt_seconds(peer_big), fmt_ratio(peer_big / ours_big), False)])]


def list_memory(res):
    text = open(os.path.join(res, "list_memory.txt")).read()
    panels = []
    for sites, ours, peer in re.findall(r"^(\d+)k sites: max RSS probekit .*? (\d+) KiB, readelf -n (\d+) KiB", text, re.M):
        ours, peer = int(ours) / 1024, int(peer) / 1024
        panels.append(Panel(f"peak memory, {sites},000 sites", "MiB (max RSS)",
                            [("probekit list", ours, f"{ours:.1f} MiB", "", True),
                             ("readelf -n", peer, f"{peer:.1f} MiB", fmt_ratio(peer / ours), False)]))
    if not panels:
        raise ValueError("list_memory.txt: no 'NNk sites: max RSS ...' line")
    return panels


def probe_cost(res):
    text = open(os.path.join(res, "probe_cost.txt")).read()
    disabled = re.findall(r"^(\w+)\s+([\d.]+) instr/iter", text, re.M)
    enabled = [(n, float(v)) for n, v in re.findall(r"^(\w+)\s+([\d.]+) ns/iter", text, re.M) if n != "none"]
    if not disabled or not enabled:
        raise ValueError("probe_cost.txt: no instr/iter or ns/iter lines")
    sdt = dict(enabled).get("sdt")
    return [Panel("disabled: instructions per loop iteration (callgrind)", "instructions",
                  [(n, float(v), f"{float(v):.0f}", "", n in ("plain", "gated")) for n, v in disabled]),
            Panel("enabled: time per hit, bpftrace counting", "ns per hit",
                  [(n, v, f"{v / 1000:.2f} µs", f"sdt/{n}: {fmt_ratio(sdt / v)}" if sdt and n == "gated" else "",
                    n in ("plain", "gated")) for n, v in enabled])]


def trace_overhead(res):
    rows = {}
    for line in open(os.path.join(res, "trace.txt")):
        f = line.split()
        if len(f) >= 8 and f[0] in ("trace", "count", "bpftrace"):
            rows[f[0]] = (float(f[4]), float(f[6]))
    if "bpftrace" not in rows or len(rows) < 2:
        raise ValueError("trace.txt: no trace/count/bpftrace rows")
    names = {"trace": "trace", "count": "trace --count", "bpftrace": "bpftrace"}
    bt_ns, bt_cpu = rows["bpftrace"]
    order = [n for n in ("trace", "count", "bpftrace") if n in rows]
    return [Panel("overhead per hit in the traced threads, 100,000 hits/s", "ns per hit",
                  [(names[n], rows[n][0], f"{rows[n][0]:.0f} ns", f"{fmt_ratio(rows[n][0] / bt_ns)} bpftrace"
                    if n != "bpftrace" else "", n != "bpftrace") for n in order]),
            Panel("the tracer's own CPU", "% of one CPU",
                  [(names[n], rows[n][1], f"{rows[n][1]:.1f} %", f"{fmt_ratio(rows[n][1] / bt_cpu)} bpftrace"
                    if n != "bpftrace" else "", n != "bpftrace") for n in order])]


def thread_dumps(res):
    def panel(file, title):
        runs = hyperfine(os.path.join(res, file))
        # Commands name the pid of the run; the tool is what comes before it.
        named = {("probekit threads" if "probekit" in c else c.split(" -p")[0].split(" -batch")[0]): v
                 for c, v in runs.items()}
        ours = named.pop("probekit threads")
        return Panel(title, "seconds (log)", [("probekit threads", ours, fmt_seconds(ours), "", True)] +
                     [(n, v, fmt_seconds(v), fmt_ratio(v / ours), False)
                      for n, v in sorted(named.items(), key=lambda kv: kv[1])], log=True)
    return [panel("threads_symbols.json", "64 stacks, function+offset"),
            panel("threads_lines.json", "64 stacks with file:line")]


def runtime_dispatch(res):
    """One typed callback on a 2-argument probe, CPU time per event (medians of
    the repetitions), for each way of linking the runtime, against a direct
    call through a function pointer (the same run's, shared build)."""
    def medians(variant):
        with open(os.path.join(res, f"runtime_{variant}.json")) as f:
            rows = json.load(f)["benchmarks"]
        return {r["run_name"]: r["cpu_time"] for r in rows if r.get("aggregate_name") == "median"}
    variants = ["shared", "static", "static-urcu", "inline"]
    got = {v: medians(v) for v in variants if os.path.exists(os.path.join(res, f"runtime_{v}.json"))}
    if "shared" not in got:
        raise ValueError("no runtime_shared.json")
    direct = got["shared"]["BM_direct_call"]
    bars = [("direct call", direct, f"{direct:.2f} ns", "", False)]
    for v, m in got.items():
        t = m["BM_typed_callback/real_time/threads:1"]
        bars.append((v, t, f"{t:.2f} ns", f"{fmt_ratio(t / direct)} direct", True))
    return [Panel("one typed C++ callback, 2 arguments (target: <= 10 ns, <= 5x a direct call)", "ns per event (CPU)", bars)]


CHARTS = {
    "header_generation.png": header_generation,
    "site_compile.png": site_compile,
    "list_speed.png": list_speed,
    "list_memory.png": list_memory,
    "probe_cost.png": probe_cost,
    "trace_overhead.png": trace_overhead,
    "thread_dumps.png": thread_dumps,
    "runtime_dispatch.png": runtime_dispatch,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--out", default=os.path.join(HERE, "..", "docs", "img"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    failed = 0
    for name, chart in CHARTS.items():
        path = os.path.join(a.out, name)
        try:
            panels = chart(a.results)
            draw(path, panels)
            print(f"{os.path.relpath(path)}: {len(panels)} panel(s)")
        except (OSError, KeyError, ValueError, RuntimeError) as e:
            failed += 1
            print(f"draw_charts: {name} not drawn: {type(e).__name__}: {e}", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
