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
source "$root/bench/probe_cost/common.sh"
build_loop "$build" "$w" -L"$lib" -Wl,-rpath,"$lib" -Wl,--no-as-needed -lprobekit -Wl,--as-needed
ldd "$w/loop" | grep -q libprobekit || { echo "loop is not linked with libprobekit" >&2; exit 1; }
echo "## gated probe, no listener, libprobekit linked: instructions per iteration (callgrind, 10,000,000 iterations, gcc -O2)"
instructions_per_iteration "$w" 10000000 none gated
