#!/usr/bin/env bash
# Thread dump figures (docs/benchmarks.md, "Thread dumps"): one 64-thread
# process (tests/runtime/threads_target: 22 threads in nanosleep, 21 in a
# condition wait, 21 in a pipe read, each five calls deep), in the same run:
#   1. `probekit threads PID --interrupt-all` (all 64 stacks, symbolized)
#      against `gdb -batch -p PID -ex 'thread apply all bt'` and
#      `eu-stack -p PID`; with file:line (`--lines`) against `eu-stack -s`;
#   2. in-process: median and p99 of 100 dumps, and the spread of the
#      threads' answer times within a dump;
#   3. what the threads pay while nobody dumps: their scheduler switch counts
#      over 5 s (zero: no timer, no polling).
# Usage: bench/threads/run.sh [BUILD_DIR] (default build-bench, configured
# here if it does not exist: --buildtype=release, so the CLI is linked
# statically as shipped, which starts faster than a dynamic one).
# Needs gdb, elfutils, hyperfine.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-bench}
[[ -f $build/build.ninja ]] || meson setup "$build" "$root" --buildtype=release >/dev/null
ninja -C "$build" probekit tests/runtime/threads_target >/dev/null
# A binary just linked is still being written back: its first runs pay for it.
sync
readelf -l "$build/probekit" | grep -q 'program interpreter' && echo "probekit CLI: dynamically linked" ||
  echo "probekit CLI: statically linked"
target=$build/tests/runtime/threads_target
probekit=$build/probekit
out=$(mktemp -d)
trap 'exec 3>&-; wait 2>/dev/null; rm -rf "$out"' EXIT

mkfifo "$out/in"
"$target" <"$out/in" >"$out/pid" &
exec 3>"$out/in"
for _ in $(seq 100); do [[ -s $out/pid ]] && break; sleep 0.05; done
pid=$(head -1 "$out/pid")
echo "target pid $pid: $(ls /proc/$pid/task | wc -l) threads"

echo "== 1. external dumps of all 64 stacks (hyperfine, same process)"
"$probekit" threads "$pid" --interrupt-all | grep -c ' pk_sleep_5+0x' | sed 's/^/probekit stacks through pk_sleep_5: /'
# A process that has just started is slower to dump for a few seconds (first
# writes into the threads' capture windows, the kernel settling the new
# memory: about +0.6 ms here); a process being diagnosed has been running.
sleep 3
# The floor of any command on this machine now: a static `int main() {}`.
if echo 'int main(void) { return 0; }' | cc -O2 -static -x c - -o "$out/empty" 2>/dev/null; then
  hyperfine -N --warmup 3 --runs 20 "$out/empty" 2>&1 | grep -E 'Time|Range' | sed 's/^/empty static process: /'
fi
hyperfine -N --warmup 3 --runs 20 --export-json "$out/symbols.json" \
  "$probekit threads $pid --interrupt-all" \
  "eu-stack -p $pid" \
  "gdb -batch -p $pid -ex 'thread apply all bt'" 2>&1 | grep -vE '^\s*$'
hyperfine -N --warmup 3 --runs 20 --export-json "$out/lines.json" \
  "$probekit threads $pid --interrupt-all --lines" \
  "eu-stack -s -p $pid" 2>&1 | grep -vE '^\s*$'
# Kept for bench/draw_charts.py (docs/img/thread_dumps.png).
results=${RESULTS:-$root/bench/results}
mkdir -p "$results"
cp "$out/symbols.json" "$results/threads_symbols.json"
cp "$out/lines.json" "$results/threads_lines.json"
# Means are pulled up by the machine's other load: the medians too.
for f in symbols lines; do
  python3 - "$out/$f.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
p = r[0]
for peer in r[1:]:
    print(f"{peer['command'].split(' -p')[0].split(' -batch')[0]}: median {peer['median'] * 1e3:.1f} ms / probekit "
          f"{p['median'] * 1e3:.2f} ms = {peer['median'] / p['median']:.1f}x (means: {peer['mean'] / p['mean']:.1f}x)")
PY
done

echo "== 3. cost for threads not being dumped: switches of every thread over 5 s without dumps"
before=$(cat /proc/$pid/task/*/schedstat | awk '{s+=$3} END {print s}')
sleep 5
after=$(cat /proc/$pid/task/*/schedstat | awk '{s+=$3} END {print s}')
echo "context switches of the 64 threads + main + service thread in 5 s: $((after - before))"
exec 3>&-
wait

echo "== 2. in-process, 100 dumps each"
for args in "--interrupt-all" "--interrupt-all --file-line"; do
  "$target" --dumps 100 $args | python3 "$root/bench/threads/summarize.py" "$args"
done
