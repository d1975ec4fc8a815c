#!/usr/bin/env bash
# Run the benchmarks and refresh bench/results/; the figures in
# docs/benchmarks.md and the charts in docs/img/ come from these files. The
# compile benchmarks alone take about 11 minutes on 2 cores (648 s on 2026-12-02).
#
#   bench/run_all.sh            # all of them
#   bench/run_all.sh speed      # header generation only (compile_speed.sh)
#   bench/run_all.sh sites      # 20,000-site TU only (site_compile.sh)
#   bench/run_all.sh list       # listing 20,000 and 200,000 sites (list_speed.sh)
#   bench/run_all.sh cost       # probe cost, disabled and enabled (probe_cost/run.sh; root, bpftrace)
#   bench/run_all.sh runtime    # libprobekit dispatch (runtime/run.sh; Google Benchmark, callgrind)
#   bench/run_all.sh trace      # probekit trace at 100,000 hits/s against bpftrace (trace/run.py; root)
#   bench/run_all.sh threads    # thread dumps against gdb and eu-stack (threads/run.sh; its own release build)
#   bench/run_all.sh charts     # only redraw docs/img/*.png from bench/results (draw_charts.py)
#
# `all` runs them all (the probe cost and trace only as root with bpftrace);
# every mode then redraws the charts.
#
# Needs: a build (ninja -C build; measured as it is, not rebuilt here),
# SystemTap's dtrace (systemtap-sdt-dev), hyperfine, g++, readelf; gnuplot
# (gnuplot-nox) for the charts.
# Environment variables are passed through to the scripts (RUNS, PROBEKIT,
# RESULTS, ...; see each script's header).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
what=${1:-all}

case $what in all|speed|sites|list|cost|runtime|trace|threads|charts) ;;
  *) echo "usage: $0 [all|speed|sites|list|cost|runtime|trace|threads|charts]" >&2; exit 2 ;; esac
if [[ $what == charts ]]; then exec python3 "$here/draw_charts.py" --results "${RESULTS:-$here/results}"; fi

# Others may be relinking build/probekit right now: give it a minute to appear.
for _ in $(seq 30); do [[ -x ${PROBEKIT:-$root/build/probekit} ]] && break; sleep 2; done
[[ -x ${PROBEKIT:-$root/build/probekit} ]] || { echo "build probekit first: ninja -C $root/build" >&2; exit 1; }

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(uname -r), $(gcc --version | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$SECONDS
case $what in
  all)   "$here/compile_speed.sh"; echo; "$here/site_compile.sh"; echo; "$here/list_speed.sh"; echo
         "$here/runtime/run.sh" "$root/build"; echo
         "$here/threads/run.sh"; echo
         if [[ $(id -u) -eq 0 ]] && command -v bpftrace >/dev/null; then
           "$here/probe_cost/run.sh"; echo; "$here/trace/run.py" "$root/build"
         else echo "probe cost and trace: skipped (need root and bpftrace); their results are kept"; fi ;;
  speed) "$here/compile_speed.sh" ;;
  sites) "$here/site_compile.sh" ;;
  list)  "$here/list_speed.sh" ;;
  cost)  "$here/probe_cost/run.sh" ;;
  runtime) "$here/runtime/run.sh" "$root/build" ;;
  trace) "$here/trace/run.py" "$root/build" ;;
  threads) "$here/threads/run.sh" ;;
esac
# The comparisons as PNG charts in docs/img/, from whatever is in results/.
python3 "$here/draw_charts.py" --results "${RESULTS:-$here/results}"
echo
echo "# done in $((SECONDS - start)) s; results in ${RESULTS:-$here/results}:"
ls -l "${RESULTS:-$here/results}"
