#!/usr/bin/env bash
# Installs the Debian 12 packages probekit needs to build, test and demo.
# Run as root. Installs only what is missing, unless --always is given (CI).
set -euo pipefail

PACKAGES=(
  # build
  meson ninja-build pkg-config g++ clang lld mold python3
  # libraries
  systemtap-sdt-dev libelf-dev libdw-dev liburcu-dev libcli11-dev nlohmann-json3-dev
  # the static probekit of release builds: libelf.a needs libz.a
  zlib1g-dev
  # tests: Catch2, sanitizer and fuzzer runtimes, and the real consumers
  catch2 libclang-rt-14-dev gdb systemtap bpftrace linux-perf elfutils binutils
  # benchmarks, and their charts (bench/draw_charts.py)
  libbenchmark-dev valgrind hyperfine gnuplot-nox
  # the install test (an outside project built with CMake) and the man pages' test
  cmake man-db groff-base
)

missing=()
if [[ "${1:-}" == "--always" ]]; then
  missing=("${PACKAGES[@]}")
else
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q "${missing[@]}"
