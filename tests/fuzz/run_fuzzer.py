#!/usr/bin/env python3
"""Runs a libFuzzer target for a bounded time; the `fuzz_spec` meson test.

    run_fuzzer.py --fuzzer PATH --workdir DIR [--dict FILE] [--seeds DIR]... [-- LIBFUZZER_FLAGS...]

New corpus entries go to DIR/corpus and crash inputs to DIR/artifacts, both
emptied first; seed directories are only read, so a read-only corpus is fine.
The run lasts $PROBEKIT_FUZZ_SECONDS seconds (default 60). The exit status is
non-zero when libFuzzer found a crash, leak, timeout or OOM; the saved input
is printed, with the command that reproduces it.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

DEFAULT_SECONDS = 60
# Loading seeds and the final merge happen outside -max_total_time.
GRACE_SECONDS = 120


def escaped(data: bytes, limit: int = 4096) -> str:
    """The input as a C/Python-style escaped string."""
    out = []
    for b in data[:limit]:
        c = chr(b)
        if c == "\\":
            out.append("\\\\")
        elif c == '"':
            out.append('\\"')
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif 0x20 <= b < 0x7F:
            out.append(c)
        else:
            out.append("\\x%02x" % b)
    s = '"' + "".join(out) + '"'
    if len(data) > limit:
        s += " ... (%d bytes in all)" % len(data)
    return s


def reset_dir(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fuzzer", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--dict")
    ap.add_argument("--seeds", action="append", default=[])
    ap.add_argument("flags", nargs="*", help="extra libFuzzer flags (after --)")
    args = ap.parse_args()

    env_seconds = os.environ.get("PROBEKIT_FUZZ_SECONDS", "").strip()
    try:
        seconds = int(env_seconds) if env_seconds else DEFAULT_SECONDS
    except ValueError:
        print(f"PROBEKIT_FUZZ_SECONDS must be a whole number of seconds, not {env_seconds!r}", file=sys.stderr)
        return 2
    if seconds <= 0:
        print("PROBEKIT_FUZZ_SECONDS <= 0: fuzzing skipped")
        return 0

    workdir = os.path.abspath(args.workdir)
    corpus = os.path.join(workdir, "corpus")
    artifacts = os.path.join(workdir, "artifacts")
    reset_dir(corpus)
    reset_dir(artifacts)

    seeds = []
    for d in args.seeds:
        if os.path.isdir(d):
            seeds.append(os.path.abspath(d))
        else:
            print(f"note: seed directory {d} does not exist; skipped")

    cmd = [os.path.abspath(args.fuzzer), f"-max_total_time={seconds}", "-print_final_stats=1",
           "-artifact_prefix=" + artifacts + os.sep]
    if args.dict and os.path.isfile(args.dict):
        cmd.append("-dict=" + os.path.abspath(args.dict))
    cmd += args.flags
    # The first directory receives new inputs; the others are only read.
    cmd += [corpus] + seeds
    print("+ " + " ".join(cmd), flush=True)

    start = time.monotonic()
    proc = subprocess.Popen(cmd, start_new_session=True)
    try:
        rc = proc.wait(timeout=seconds + GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        # Only our own child's process group.
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        print(f"FAIL: the fuzzer did not stop within {seconds + GRACE_SECONDS} s", file=sys.stderr)
        return 1
    elapsed = time.monotonic() - start

    found = sorted(f for f in os.listdir(artifacts)
                   if re.match(r"(crash|leak|timeout|oom|slow-unit)-", f))
    failures = [f for f in found if not f.startswith("slow-unit-")]
    for f in found:
        path = os.path.join(artifacts, f)
        with open(path, "rb") as fh:
            data = fh.read()
        kind = "slow input (not a failure)" if f.startswith("slow-unit-") else "FAILING INPUT"
        print(f"\n{kind}: {path} ({len(data)} bytes)")
        print("  as escaped text: " + escaped(data))
        print(f"  reproduce: {os.path.abspath(args.fuzzer)} {path}")

    if rc != 0 or failures:
        print(f"\nFAIL: the fuzzer exited with status {rc} after {elapsed:.0f} s", file=sys.stderr)
        if not failures:
            print("(no input was saved; see libFuzzer's output above)", file=sys.stderr)
        return 1
    n = len(os.listdir(corpus))
    print(f"\nOK: {elapsed:.0f} s of fuzzing, no crash; {n} new corpus entries in {corpus}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
