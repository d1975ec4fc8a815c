#!/usr/bin/env bash
# The runtime's figures (docs/benchmarks.md, section 5), against their peers
# in the same run:
#  1. dispatch_bench (Google Benchmark) for each way of linking the runtime:
#       shared   libprobekit.so + liburcu-bp.so (the default)
#       static   libprobekit.a + liburcu-bp.so
#       static-urcu  libprobekit.a + liburcu-bp.a into the executable (the
#                linker relaxes liburcu's TLS accesses to %fs-relative ones
#                and binds its calls directly)
#       inline   the runtime compiled with -DPROBEKIT_URCU_INLINE
#                -ftls-model=initial-exec (LGPL inlining: opt-in, see
#                docs/runtime.md)
#  2. callgrind: instructions per event and where they go (dispatch_profile),
#     and the gated probe with no listener against no probe (gate_cost.sh).
# Usage: bench/runtime/run.sh [BUILD_DIR]   (BUILD_DIR: any build of the
# tree, default build-test: only its probekit tools and the generated
# probekit_probes.h are used; the runtime is compiled here with -O2, without
# sanitizers). REPS=3 repetitions.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build-test}
ninja -C "$build" probekit probekit-dtrace probekit_probes.h >/dev/null
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cxx="g++ -std=c++20 -O2 -I$root/include -I$root/src -I$build"
urcu_so=$(pkg-config --libs liburcu-bp)
urcu_a="$(pkg-config --variable=libdir liburcu-bp)/liburcu-bp.a $(pkg-config --variable=libdir liburcu-bp)/liburcu-common.a"
srcs=$(ls "$root"/src/runtime/*.cc)

# The runtime compiled here with the given flags, as a static archive.
runtime_archive() {  # NAME FLAGS...
  local name=$1; shift
  mkdir -p "$w/obj/$name"
  for f in $srcs; do $cxx "$@" -fPIC -fvisibility=hidden -c "$f" -o "$w/obj/$name/$(basename "$f" .cc).o"; done
  ar rcs "$w/lib$name.a" "$w/obj/$name"/*.o
}
runtime_archive probekit
runtime_archive inline -DPROBEKIT_URCU_INLINE -ftls-model=initial-exec
mkdir -p "$w/so"
g++ -shared -Wl,-soname,libprobekit.so.0 "$w/obj/probekit"/*.o $urcu_so -lpthread -o "$w/so/libprobekit.so.0"
ln -s libprobekit.so.0 "$w/so/libprobekit.so"

bench_src="$here/dispatch_bench.cc"
$cxx "$bench_src" -L"$w/so" -Wl,-rpath,"$w/so" -lprobekit $urcu_so -lbenchmark -lpthread -o "$w/shared"
$cxx "$bench_src" "$w/libprobekit.a" $urcu_so -lbenchmark -lpthread -o "$w/static"
$cxx "$bench_src" "$w/libprobekit.a" $urcu_a -lbenchmark -lpthread -o "$w/static-urcu"
$cxx "$bench_src" "$w/libinline.a" $urcu_so -lbenchmark -lpthread -o "$w/inline"

echo "# runtime dispatch, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(g++ --version | head -1)"
# JSON copies for bench/draw_charts.py (docs/img/runtime_dispatch.png).
results=${RESULTS:-$root/bench/results}
mkdir -p "$results"
for v in ${VARIANTS:-shared static static-urcu inline}; do
  echo "## $v"
  "$w/$v" --benchmark_repetitions=${REPS:-3} --benchmark_report_aggregates_only=true \
    --benchmark_filter="${FILTER:-.}" --benchmark_out="$results/runtime_$v.json" --benchmark_out_format=json \
    | grep -E "_median" || true
done

echo "## callgrind: instructions per event, one typed callback (1,000,000 events)"
$cxx "$here/dispatch_profile.cc" -L"$w/so" -Wl,-rpath,"$w/so" -lprobekit $urcu_so -o "$w/profile-shared"
$cxx "$here/dispatch_profile.cc" "$w/libprobekit.a" $urcu_a -lpthread -o "$w/profile-static-urcu"
$cxx "$here/dispatch_profile.cc" "$w/libinline.a" $urcu_so -lpthread -o "$w/profile-inline"
for v in shared static-urcu inline; do
  for mode in direct typed; do
    valgrind --tool=callgrind --callgrind-out-file="$w/cg.$v.$mode" --toggle-collect="work_$mode" \
      "$w/profile-$v" $mode 1000000 >/dev/null 2>&1
  done
  direct=$(callgrind_annotate "$w/cg.$v.direct" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}')
  typed=$(callgrind_annotate "$w/cg.$v.typed" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}')
  awk -v v=$v -v d=$direct -v t=$typed 'BEGIN { printf "%-12s direct call %.1f instr/event, typed callback %.1f instr/event\n", v, d/1e6, t/1e6 }'
  callgrind_annotate --inclusive=no "$w/cg.$v.typed" 2>/dev/null \
    | grep -E '^ *[0-9,]+ \(' | grep -v 'PROGRAM TOTALS' | head -8 | sed 's/^/    /'
done
LIBPROBEKIT_DIR="$w/so" "$here/gate_cost.sh" "$build"
