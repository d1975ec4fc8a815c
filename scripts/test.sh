#!/usr/bin/env bash
# Builds probekit and runs every test: unit tests and tool tests under
# ASan+UBSan with -Werror, the fuzzers for a bounded time, and the runtime's
# concurrent tests under TSan.
# Ends with one line "N passed, N failed[, N skipped]"; exits non-zero on failure.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh || exit 1

# Consumers that attach uprobes (bpftrace) need tracefs.
if [[ $(id -u) -eq 0 ]] && ! mountpoint -q /sys/kernel/tracing 2>/dev/null; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

status=0
build=build-test
fuzzbuild=build-fuzz
if [[ ! -f $build/build.ninja ]]; then
  meson setup $build -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false || exit 1
fi
ninja -C $build || exit 1
meson test -C $build --print-errorlogs --num-processes 2 || status=1

if [[ ! -f $fuzzbuild/build.ninja ]]; then
  CC=clang CXX=clang++ meson setup $fuzzbuild -Dfuzz=true -Dwerror=true || exit 1
fi
# The whole tree, not only the fuzzers: it must also build warning-free with
# clang (-Werror).
ninja -C $fuzzbuild || exit 1
meson test -C $fuzzbuild --print-errorlogs --suite fuzz || status=1

# The runtime's concurrent tests again under ThreadSanitizer (a build of its
# own: TSan cannot share a process with ASan).
tsanbuild=build-tsan
if [[ ! -f $tsanbuild/build.ninja ]]; then
  meson setup $tsanbuild -Dwerror=true -Db_sanitize=thread -Db_lundef=false || exit 1
fi
ninja -C $tsanbuild tests/runtime/runtime_tests tests/runtime/runtime_stress_tests tests/runtime/runtime_exit_tests \
  tests/runtime/runtime_threads_tests tests/runtime/libthreads_dl_module.so || exit 1
meson test -C $tsanbuild --no-rebuild --print-errorlogs runtime runtime_stress runtime_exit runtime_threads || status=1

python3 - $build/meson-logs/testlog.json $fuzzbuild/meson-logs/testlog.json $tsanbuild/meson-logs/testlog.json <<'PY' || status=1
import json, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)["result"]
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
        else:
            failed += 1
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed or passed == 0 else 0)
PY
exit $status
