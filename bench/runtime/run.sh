#!/usr/bin/env bash
# Builds and runs the dispatch benchmark against BUILD_DIR's libprobekit
# (default build-rt, configured --buildtype=debugoptimized or release).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-rt}
ninja -C "$build" libprobekit.a >/dev/null
out=$(mktemp -d)
g++ -std=c++20 -O2 -I"$root/include" "$root/bench/runtime/dispatch_bench.cc" "$build/libprobekit.a" \
  $(pkg-config --libs liburcu-bp) -lbenchmark -lpthread -o "$out/dispatch_bench"
"$out/dispatch_bench" --benchmark_repetitions=${REPS:-3} --benchmark_report_aggregates_only=true "${@:2}"
rm -rf "$out"
