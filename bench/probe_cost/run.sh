#!/usr/bin/env bash
# Probe costs, against the peers in the same run:
#  1. disabled: instructions per loop iteration counted by callgrind, for no
#     probe, probekit's plain and gated forms and SystemTap's header;
#  2. enabled: wall time per hit while bpftrace counts hits, for sys/sdt.h's
#     1-byte NOP (int3 trap), probekit's plain form (1-byte NOP) and gated
#     form (5-byte NOP in an out-of-line function: the kernel's CALL to a
#     trampoline on Linux 6.18+). Needs root and bpftrace.
# Usage: bench/probe_cost/run.sh [BUILD_DIR]   (writes bench/results/probe_cost.txt)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
out=$root/bench/results/probe_cost.txt
mkdir -p "$root/bench/results"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
source "$here/common.sh"
build_loop "$build" "$w"

{
echo "# probe cost, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) cores, $(gcc --version | head -1)"
echo "## disabled: instructions per iteration (callgrind, 10,000,000 iterations, gcc -O2)"
instructions_per_iteration "$w" 10000000 none plain gated sdt sdt_enabled
if [[ $(id -u) -eq 0 ]] && command -v bpftrace >/dev/null; then
  mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
  echo "## enabled: ns per hit while bpftrace counts hits (1,000,000 hits, median of 3)"
  M=1000000
  for v in none plain gated sdt; do
    times=()
    for r in 1 2 3; do
      if [[ $v == none ]]; then
        t=$("$w/loop" $M $v | awk '{print $2}')
      else
        prov=bench; [[ $v == sdt ]] && prov=sdt
        t=$(bpftrace -e "usdt:$w/loop:$prov:hit { @hits = count(); }" -c "$w/loop $M $v" 2>/dev/null | awk '/ns\/iter/ {print $2}')
      fi
      times+=("$t")
    done
    printf '%s\n' "${times[@]}" | sort -g | sed -n 2p | awk -v v=$v '{ printf "%-12s %9.1f ns/iter\n", v, $1 }'
  done
else
  echo "## enabled: skipped (needs root and bpftrace)"
fi
} | tee "$out"
