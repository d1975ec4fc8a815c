#!/usr/bin/env bash
# Compile time of a translation unit with 20,000 probe sites (bench/gen_sites.py:
# 200 functions x 100 sites, each site one of 100 probes with 2-3 arguments,
# the function's locals as they are), `g++ -std=c++17 -O2 -c`, per marker:
#
#   none       no probes: the same code, the macros only cast their arguments to void
#   gated      probekit header, NAME_GATED(...)
#   plain      probekit header, NAME(...)
#   sdt        SystemTap `dtrace -h` header, NAME(...) (sys/sdt.h STAP_PROBEn, semaphores)
#   sdt_gated  the same, `if (NAME_ENABLED()) NAME(...)`
#   call_gated no marker: `if (semaphore) extern_function(args)`, an ordinary call
#              behind the same gate: the floor of any gated form (see gen_sites.py)
#
# Each variant is compiled once untimed (checks it builds and has its probes in
# .note.stapsdt; also warms the caches), then RUNS (3) times under hyperfine.
# Ratios are against `none`. Requirement: the marker (plain) <= 3 x none; the
# gated form is held to call_gated (docs/benchmarks.md, section 2).
# Re-runnable: the probekit header is regenerated from the current build, so
# the figures follow the marker.
#
# Usage: bench/site_compile.sh    (env: PROBEKIT, DTRACE, CXX, RUNS, VARIANTS, FUNCS, SITES,
#                                   RESULTS, WORK, OUT_NAME; GEN_ARGS: gen_sites.py's options, default
#                                   --plain-args; GEN_ARGS= computes each argument from the locals)
# Writes RESULTS/$OUT_NAME.json (default site_compile.json) (hyperfine export, stamped with the machine).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
probekit=${PROBEKIT:-$root/build/probekit}
dtrace=${DTRACE:-/usr/bin/dtrace}
cxx=${CXX:-g++}
runs=${RUNS:-3}
variants=${VARIANTS:-none call_gated gated plain sdt sdt_gated}
funcs=${FUNCS:-200}
sites=${SITES:-100}
gen_args=${GEN_ARGS---plain-args}
results=${RESULTS:-$here/results}
work=${WORK:-/tmp/probekit-bench/site_compile}
out_name=${OUT_NAME:-site_compile}
mkdir -p "$results" "$work"

[[ -x $probekit ]] || { echo "no probekit at $probekit (run: ninja -C $root/build)" >&2; exit 1; }
command -v "$dtrace" >/dev/null || { echo "SystemTap's dtrace not found ($dtrace)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "hyperfine not found" >&2; exit 1; }
probekit_id="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown), binary $(date -u -r "$probekit" +%Y-%m-%dT%H:%M:%SZ) $(sha256sum "$probekit" | cut -c1-12)"

# shellcheck disable=SC2086
python3 "$here/gen_sites.py" "$work" --funcs "$funcs" --sites "$sites" $gen_args
"$probekit" compile "$work/sites.d" -o "$work/probekit.h"
"$dtrace" -h -s "$work/sites.d" -o "$work/sdt.h"
nsites=$((funcs * sites))
echo "== $nsites probe sites, $cxx -std=c++17 -O2 -c; probekit $probekit_id"

cmds=()
for v in $variants; do
  cmd="$cxx -std=c++17 -O2 -c $work/sites_$v.cc -o $work/$v.o"
  # Untimed build: it must compile, and its notes must be there.
  # shellcheck disable=SC2086  # $cmd is split into words on purpose
  /usr/bin/time -f "%e s wall, %M KB max RSS" $cmd 2> "$work/$v.time" || { cat "$work/$v.time" >&2; exit 1; }
  notes=$(readelf -nW "$work/$v.o" | grep -c 'Provider: bench' || true)
  text=$(size -A "$work/$v.o" | awk '$1 ~ /^\.text/ {s += $2} END {print s + 0}')
  echo "  $v: $notes .note.stapsdt entries, $text bytes of .text, first build $(tail -1 "$work/$v.time")"
  if [[ $v == none || $v == call_gated ]]; then
    ((notes == 0)) || { echo "$v: expected no notes" >&2; exit 1; }
  else
    ((notes > 0)) || { echo "$v: no .note.stapsdt entries" >&2; exit 1; }
  fi
  cmds+=(-n "$v" "$cmd")
done

hyperfine -N --style basic --runs "$runs" --export-json "$results/$out_name.json" "${cmds[@]}"
python3 "$here/report.py" "$results/$out_name.json" --ref none \
  --meta "probekit_binary=$probekit_id" "sites=$nsites" "functions=$funcs" "gen_args=$gen_args" \
  "compiler=$($cxx --version | head -1)" "flags=-std=c++17 -O2 -c" \
  "requirement=probekit plain marker at most 3 times the no-probe compile time"
