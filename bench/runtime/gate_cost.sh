#!/usr/bin/env bash
# A gated probe with no listener, in a program linked with libprobekit (its
# descriptor registered, the gate closed), against no probe: instructions
# per loop iteration counted by callgrind (bench/probe_cost/loop.c).
# Usage: bench/runtime/gate_cost.sh [BUILD_DIR]   (libprobekit.so from
# $LIBPROBEKIT_DIR, default BUILD_DIR)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build-test}
lib=${LIBPROBEKIT_DIR:-$build}
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
printf 'provider bench { probe hit(long i, long s); };\n' > "$w/bench.d"
printf 'provider sdt { probe hit(long i, long s); };\n' > "$w/sdt.d"
"$build/probekit" compile "$w/bench.d" -o "$w/bench_probes.h"
"$build/probekit-dtrace" -h -s "$w/sdt.d" -o "$w/sdt_probes.h"
"$build/probekit-dtrace" -G -s "$w/sdt.d" -o "$w/sdt_probes.o"
gcc -O2 -I"$w" "$root/bench/probe_cost/loop.c" "$w/sdt_probes.o" -L"$lib" -Wl,-rpath,"$lib" \
  -Wl,--no-as-needed -lprobekit -Wl,--as-needed -o "$w/loop"
ldd "$w/loop" | grep -q libprobekit || { echo "loop is not linked with libprobekit" >&2; exit 1; }
echo "## gated probe, no listener, libprobekit linked: instructions per iteration (callgrind, 10,000,000 iterations, gcc -O2)"
N=10000000
base=""
for v in none gated; do
  valgrind --tool=callgrind --callgrind-out-file="$w/cg.$v" --toggle-collect="work_$v" "$w/loop" $N $v >/dev/null 2>&1
  ir=$(callgrind_annotate "$w/cg.$v" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}')
  [[ -z $base ]] && base=$ir
  awk -v v=$v -v ir=$ir -v base=$base -v n=$N 'BEGIN { printf "%-12s %8.3f instr/iter  (+%.3f over no probe)\n", v, ir/n, (ir-base)/n }'
done
