#!/usr/bin/env bash
# Header generation speed: `probekit compile` against SystemTap's `dtrace -h`
# on the same generated provider file (bench/gen_spec.py, seeded).
#
#   1. 2,000 probes: both tools, hyperfine (3 warm-up runs, RUNS measured runs
#      each), ratio = dtrace mean / probekit mean. Requirement: >= 50.
#   2. 20,000 probes: probekit alone (hyperfine), and dtrace -h once if it
#      finishes within DTRACE_TIMEOUT (90 s), to show how each scales.
#
# Usage: bench/compile_speed.sh            (env: PROBEKIT, DTRACE, RUNS, RESULTS, WORK, DTRACE_TIMEOUT)
# Writes RESULTS/compile_speed_2k.json and RESULTS/compile_speed_20k.json
# (hyperfine exports, stamped with the machine; RESULTS defaults to bench/results).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
probekit=${PROBEKIT:-$root/build/probekit}
dtrace=${DTRACE:-/usr/bin/dtrace}
runs=${RUNS:-20}
results=${RESULTS:-$here/results}
work=${WORK:-/tmp/probekit-bench/compile_speed}
dtrace_timeout=${DTRACE_TIMEOUT:-90}
mkdir -p "$results" "$work"

[[ -x $probekit ]] || { echo "no probekit at $probekit (run: ninja -C $root/build)" >&2; exit 1; }
command -v "$dtrace" >/dev/null || { echo "SystemTap's dtrace not found ($dtrace)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "hyperfine not found" >&2; exit 1; }
# Measure a snapshot of the binary: others may rebuild build/ meanwhile.
cp "$probekit" "$work/probekit"
probekit_id="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown), binary $(date -u -r "$probekit" +%Y-%m-%dT%H:%M:%SZ) $(sha256sum "$probekit" | cut -c1-12)"
probekit=$work/probekit

python3 "$here/gen_spec.py" -n 2000 -o "$work/spec2k.d"
python3 "$here/gen_spec.py" -n 20000 -o "$work/spec20k.d"

# Both tools must accept the spec and write a header (a failing tool is fast).
"$probekit" compile "$work/spec2k.d" -o "$work/pk2k.h"
"$dtrace" -h -s "$work/spec2k.d" -o "$work/dt2k.h"
size() { stat -c %s "$1"; }
echo "== 2,000 probes ($(size "$work/spec2k.d") bytes of spec): headers of $(size "$work/pk2k.h") (probekit) and $(size "$work/dt2k.h") (dtrace -h) bytes"

hyperfine -N --style basic --warmup 3 --runs "$runs" \
  --export-json "$results/compile_speed_2k.json" \
  -n "probekit compile" "$probekit compile $work/spec2k.d -o $work/pk2k.h" \
  -n "dtrace -h" "$dtrace -h -s $work/spec2k.d -o $work/dt2k.h"
python3 "$here/report.py" "$results/compile_speed_2k.json" --ref "probekit compile" \
  --meta "probekit_binary=$probekit_id" probes=2000 "spec_bytes=$(size "$work/spec2k.d")" \
  "probekit_header_bytes=$(size "$work/pk2k.h")" "dtrace_header_bytes=$(size "$work/dt2k.h")" \
  "requirement=probekit compile at least 50 times faster than dtrace -h"

echo
echo "== 20,000 probes ($(size "$work/spec20k.d") bytes of spec)"
"$probekit" compile "$work/spec20k.d" -o "$work/pk20k.h"
hyperfine -N --style basic --warmup 1 --runs "$(( runs / 2 > 5 ? runs / 2 : 5 ))" \
  --export-json "$work/pk20k.json" \
  -n "probekit compile" "$probekit compile $work/spec20k.d -o $work/pk20k.h"
# dtrace -h once (no warm-up). It took 53 s here; allow DTRACE_TIMEOUT (90 s)
# of wall time, since other work on the machine stretches it.
rm -f "$work/dt20k.h"
if hyperfine -N --style basic --runs 1 --export-json "$work/dt20k.json" \
     -n "dtrace -h" "timeout $dtrace_timeout $dtrace -h -s $work/spec20k.d -o $work/dt20k.h"; then
  # One file with both commands.
  python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a["results"] += b["results"]
json.dump(a, open(sys.argv[3], "w"), indent=1)
' "$work/pk20k.json" "$work/dt20k.json" "$results/compile_speed_20k.json"
else
  echo "dtrace -h on 20,000 probes did not finish within $dtrace_timeout s: not reported"
  cp "$work/pk20k.json" "$results/compile_speed_20k.json"
fi
python3 "$here/report.py" "$results/compile_speed_20k.json" --ref "probekit compile" \
  --meta "probekit_binary=$probekit_id" probes=20000 "spec_bytes=$(size "$work/spec20k.d")" \
  "probekit_header_bytes=$(size "$work/pk20k.h")" \
  "dtrace_header_bytes=$( [[ -f $work/dt20k.h ]] && size "$work/dt20k.h" || echo n/a)" \
  "note=dtrace -h run once (no stddev), under timeout $dtrace_timeout"
