#!/usr/bin/env bash
# Run the compile benchmarks and refresh bench/results/*.json; the figures in
# docs/benchmarks.md come from these files. About 11 minutes on 2 cores
# (648 s on 2026-12-02).
#
#   bench/run_all.sh            # both
#   bench/run_all.sh speed      # header generation only (compile_speed.sh)
#   bench/run_all.sh sites      # 20,000-site TU only (site_compile.sh)
#
# Needs: a build (ninja -C build; measured as it is, not rebuilt here),
# SystemTap's dtrace (systemtap-sdt-dev), hyperfine, g++, readelf.
# Environment variables are passed through to the scripts (RUNS, PROBEKIT,
# RESULTS, ...; see each script's header).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
what=${1:-all}

# Others may be relinking build/probekit right now: give it a minute to appear.
for _ in $(seq 30); do [[ -x ${PROBEKIT:-$root/build/probekit} ]] && break; sleep 2; done
[[ -x ${PROBEKIT:-$root/build/probekit} ]] || { echo "build probekit first: ninja -C $root/build" >&2; exit 1; }

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(uname -r), $(gcc --version | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$SECONDS
case $what in
  all)   "$here/compile_speed.sh"; echo; "$here/site_compile.sh" ;;
  speed) "$here/compile_speed.sh" ;;
  sites) "$here/site_compile.sh" ;;
  *) echo "usage: $0 [all|speed|sites]" >&2; exit 2 ;;
esac
echo
echo "# done in $((SECONDS - start)) s; results in ${RESULTS:-$here/results}:"
ls -l "${RESULTS:-$here/results}"/compile_speed_*.json "${RESULTS:-$here/results}"/site_compile.json 2>/dev/null || true
