#!/usr/bin/env bash
# The probekit demo: build, compile a provider file, run an instrumented
# program, and show its probes listed and traced by the tools people use.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

step() { printf '\n\033[1;34m==> %s\033[0m\n' "$*"; }

step "Building probekit"
[[ -f build/build.ninja ]] || meson setup build >/dev/null
ninja -C build >/dev/null
echo "built: build/probekit, build/probekit-dtrace, build/examples/demo-server"

step "The provider file: examples/server/probes.d"
grep -v '^ \*\|^/\*\|^$' examples/server/probes.d

step "probekit compile examples/server/probes.d -o server_probes.h (what the build ran)"
build/probekit compile examples/server/probes.d -o /tmp/probekit-demo-probes.h
grep -E '^#define DEMO_REQUEST_START|^PROBEKIT_GEN_V1_GATE' /tmp/probekit-demo-probes.h | head -6
echo "... typed C and C++ forms for each probe; see the whole file in /tmp/probekit-demo-probes.h"

step "A malformed spec gets a precise error and no output"
printf 'provider demo {\n  probe request__start(int fd, string path)\n  probe tick();\n};\n' > /tmp/probekit-demo-bad.d
build/probekit compile /tmp/probekit-demo-bad.d -o /tmp/probekit-demo-bad.h || echo "(exit status $?; /tmp/probekit-demo-bad.h exists: $([[ -e /tmp/probekit-demo-bad.h ]] && echo yes || echo no))"

SERVER=build/examples/demo-server
step "probekit list $SERVER: typed signatures from .note.probekit"
build/probekit list "$SERVER"

step "probekit list -v: every site, its attach path and its arguments by name"
build/probekit list -v "$SERVER" 'demo:request*'

step "probekit verify --spec: the binary holds exactly the spec's probes, all readable by every consumer"
build/probekit verify "$SERVER" --spec examples/server/probes.d

step "The probes in $SERVER, as readelf -n sees them"
readelf -n "$SERVER" | grep -A3 'Provider: demo' | grep -E 'Name|Arguments' | paste - - | sed 's/^ *//'

step "... and as gdb sees them (info probes)"
gdb -batch -ex 'info probes' "$SERVER" 2>/dev/null

step "... and with probekit's gdb extension (tools/gdb/probekit.py): types, names and docs; a stop with the arguments"
gdb -batch -x tools/gdb/probekit.py -ex 'info probekit demo:*' -ex 'probekit break demo:cache__stats' -ex 'run 3 10' \
  "$SERVER" 2>/dev/null | grep -E '^(demo:|    )'

step "Tracing live: gdb stops at demo:request__start and prints its arguments"
cat > /tmp/probekit-demo.gdb <<'GDB'
set pagination off
break -probe-stap demo:request__start
commands
  silent
  printf "request__start fd=%d path=%s\n", $_probe_arg0, (char *) $_probe_arg1
  continue
end
run
GDB
gdb -batch -x /tmp/probekit-demo.gdb --args "$SERVER" 3 10 2>/dev/null | grep -E '^request'

if [[ $(id -u) -eq 0 ]]; then
  mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing || true
  step "probekit trace: every hit with its arguments by name (kernel uprobes; no stap, no bpftrace)"
  "$SERVER" 1000 100 > /dev/null &
  pid=$!
  sleep 0.3
  build/probekit trace -p $pid --duration 1 'demo:*'
  step "... as JSON lines, for scripts"
  build/probekit trace -p $pid --format json --duration 0.5 'demo:request*' | head -3 || true
  step "... or just counted (no ring buffer: nothing can be lost)"
  build/probekit trace -p $pid --count --duration 1 'demo:*'
  kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
  step "probekit trace -c: start the program under trace, attached before its first instruction"
  build/probekit trace -c "$SERVER 5 100" 'demo:*'
else
  echo "(probekit trace steps skipped: kernel uprobes need root or CAP_PERFMON)"
fi

if [[ $(id -u) -eq 0 ]] && command -v bpftrace >/dev/null; then
  step "Tracing live with bpftrace: the gated cache__stats builder runs only while bpftrace listens"
  "$SERVER" 14 150 > /tmp/probekit-demo-server.log &
  pid=$!
  ( sleep 1.5; echo "--- meanwhile, probekit list -p $pid shows the gates bpftrace opened:"
    build/probekit list -p $pid 'demo:*'; echo "---" ) &
  timeout 5 bpftrace -p $pid -e '
    usdt:'"$SERVER"':demo:request__done { printf("request__done fd=%d status=%d latency=%dus\n", arg0, arg1, arg2); }
    usdt:'"$SERVER"':demo:cache__stats { printf("cache__stats %s\n", str(arg0)); }' 2>/dev/null || true
  wait $pid || true
else
  echo "(bpftrace step skipped: it needs root and bpftrace)"
fi

if [[ $(id -u) -eq 0 ]]; then
  step "probekit enable / disable: open a gated probe in a running process, no tracer needed"
  "$SERVER" 40 100 > /dev/null &
  pid=$!
  sleep 0.3
  build/probekit enable -p $pid --mode memory 'demo:cache*'
  build/probekit list -p $pid 'demo:cache*'
  build/probekit disable -p $pid
  build/probekit list -p $pid 'demo:cache*'
  kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
else
  echo "(enable/disable step skipped: writing another process's gates needs root)"
fi

step "probekit threads: every thread of the live server, from inside the process (no ptrace)"
"$SERVER" 1000 100 4 > /dev/null &
pid=$!
sleep 0.5
echo "--- the default mode: running threads are signalled, blocked ones are read from /proc and left alone"
build/probekit threads $pid
echo "--- --interrupt-all: every registered worker shows its stack (blocked calls may see EINTR)"
build/probekit threads --interrupt-all $pid | sed -n '1,/^Thread 4 /p'
echo "--- --format json, for scripts"
build/probekit threads --format json $pid | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps({k: d[k] for k in ("dump", "pid", "mode", "elapsed_ns")}), [t["name"] for t in d["threads"]])'
kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true

step "Done. Next: docs/getting-started.md"
