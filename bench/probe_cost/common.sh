# Shared by bench/probe_cost/run.sh and bench/runtime/gate_cost.sh (sourced):
# the loop program and the callgrind count, so both figures measure exactly
# the same code.

# build_loop BUILD_DIR WORK_DIR [extra gcc arguments...]: the probekit and
# sys/sdt.h headers for loop.c, then WORK_DIR/loop.
build_loop() {
  local build=$1 w=$2
  shift 2
  printf 'provider bench { probe hit(long i, long s); };\n' > "$w/bench.d"
  printf 'provider sdt { probe hit(long i, long s); };\n' > "$w/sdt.d"
  "$build/probekit" compile "$w/bench.d" -o "$w/bench_probes.h"
  "$build/probekit-dtrace" -h -s "$w/sdt.d" -o "$w/sdt_probes.h"
  "$build/probekit-dtrace" -G -s "$w/sdt.d" -o "$w/sdt_probes.o"
  gcc -O2 -I"$w" "$(dirname "${BASH_SOURCE[0]}")/loop.c" "$w/sdt_probes.o" "$@" -o "$w/loop"
}

# instructions_per_iteration WORK_DIR N VARIANT...: callgrind counts only the
# variant's work function; one line per variant, relative to the first.
instructions_per_iteration() {
  local w=$1 n=$2 base="" v ir
  shift 2
  for v in "$@"; do
    valgrind --tool=callgrind --callgrind-out-file="$w/cg.$v" --toggle-collect="work_$v" "$w/loop" "$n" "$v" >/dev/null 2>&1
    ir=$(callgrind_annotate "$w/cg.$v" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}')
    [[ -z $base ]] && base=$ir
    awk -v v="$v" -v ir="$ir" -v base="$base" -v n="$n" \
      'BEGIN { printf "%-12s %8.3f instr/iter  (+%.3f over no probe)\n", v, ir/n, (ir-base)/n }'
  done
}
