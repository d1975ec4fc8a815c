#!/usr/bin/env bash
# Listing a binary with 20,000 probe sites (and 200,000 for scaling):
# `probekit list -v --format json` against readelf -n, bpftrace -l,
# gdb info probes and stap -L (stub kernel tree), all on the same binary in
# one hyperfine run; peak memory (max RSS) of probekit and readelf.
# Usage: bench/list_speed.sh   (env: PROBEKIT, RUNS, RESULTS, WORK)
# The memory figures assume a static probekit, which release builds are by
# default (meson.build): a dynamic one starts with 4.2 MB of shared
# libraries resident.
# Writes RESULTS/list_speed_20k.json, list_speed_200k.json, list_memory.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
probekit=${PROBEKIT:-$root/build/probekit}
results=${RESULTS:-$here/results}
work=${WORK:-/tmp/probekit-bench/list_speed}
runs=${RUNS:-10}
mkdir -p "$results" "$work"

# The binaries: the site-compile benchmark's code (FUNCS x 100 sites of 100
# probes) compiled with probekit's header, plus a main.
build() {  # build FUNCS NAME
  local d=$work/$2
  mkdir -p "$d"
  python3 "$here/gen_sites.py" "$d" --funcs "$1" --sites 100 >/dev/null
  "$probekit" compile "$d/sites.d" -o "$d/probekit.h"
  printf 'int main(void) { return 0; }\n' > "$d/main.cc"
  g++ -std=c++17 -O1 -I"$d" "$d/sites_plain.cc" "$d/main.cc" -o "$d/bin"
  echo "$d/bin: $(readelf -n "$d/bin" | grep -c 'Provider:') sites"
}
[[ -x $work/20k/bin ]] || build 200 20k
[[ -x $work/200k/bin ]] || build 2000 200k

stub=$work/stub-kernel
mkdir -p "$stub/include/config"
printf 'CONFIG_TRACEPOINTS=y\nCONFIG_UPROBES=y\n' > "$stub/.config"
uname -r > "$stub/include/config/kernel.release"
: > "$stub/Module.symvers"

bin=$work/20k/bin
cmds=(-n "probekit list -v --format json" "$probekit list -v --format json $bin"
      -n "readelf -n" "readelf -n $bin")
command -v bpftrace >/dev/null && [[ $(id -u) -eq 0 ]] && cmds+=(-n "bpftrace -l" "bpftrace -l 'usdt:$bin:*'")
command -v gdb >/dev/null && cmds+=(-n "gdb info probes" "gdb -batch -ex 'info probes' $bin")
command -v stap >/dev/null && cmds+=(-n "stap -L" "stap -r $stub -L 'process(\"$bin\").mark(\"*\")'")
hyperfine -N --warmup 1 --runs "$runs" --export-json "$results/list_speed_20k.json" "${cmds[@]}" 2>/dev/null | grep -v '^ *$' || \
hyperfine --warmup 1 --runs "$runs" --export-json "$results/list_speed_20k.json" "${cmds[@]}"

big=$work/200k/bin
hyperfine --warmup 1 --runs 5 --export-json "$results/list_speed_200k.json" \
  -n "probekit list -v --format json (200k)" "$probekit list -v --format json $big" \
  -n "readelf -n (200k)" "readelf -n $big"

{
  for b in 20k 200k; do
    f=$work/$b/bin
    p=$( { /usr/bin/time -f %M "$probekit" list -v --format json "$f" >/dev/null; } 2>&1 )
    r=$( { /usr/bin/time -f %M readelf -n "$f" >/dev/null; } 2>&1 )
    echo "$b sites: max RSS probekit list -v --format json ${p} KiB, readelf -n ${r} KiB"
  done
} | tee "$results/list_memory.txt"
