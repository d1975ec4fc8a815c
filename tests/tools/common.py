"""Shared helpers for probekit's tool-level tests (run by meson with the
environment set in tests/meson.build). Exit code 77 tells meson a test was
skipped; every skip prints why."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

PROBEKIT = os.environ.get("PROBEKIT", "probekit")
PROBEKIT_DTRACE = os.environ.get("PROBEKIT_DTRACE", "probekit-dtrace")
CORPUS_DIR = os.environ.get("PROBEKIT_CORPUS_DIR", "")
SOURCE_ROOT = os.environ.get("PROBEKIT_SOURCE_ROOT", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

SKIP = 77
failures = []


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def need(tool):
    if shutil.which(tool) is None:
        skip(f"'{tool}' is not installed")


def run(argv, cwd=None, env=None, check=False, input=None, timeout=600):
    r = subprocess.run(argv, cwd=cwd, env=env, input=input, capture_output=True, text=True,
                       errors="replace", timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, argv))} exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def expect(cond, what):
    if cond:
        print(f"ok: {what}")
    else:
        print(f"FAIL: {what}")
        failures.append(what)


def finish():
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("all checks passed")
    sys.exit(0)


def tmpdir():
    return tempfile.mkdtemp(prefix="probekit-test-")


def corpus_files():
    if not CORPUS_DIR or not os.path.isdir(CORPUS_DIR):
        skip(f"corpus directory '{CORPUS_DIR}' is missing")
    return sorted(os.path.join(CORPUS_DIR, f) for f in os.listdir(CORPUS_DIR)
                  if f.endswith(".d") or ".d." in f)


NOTE_RE = re.compile(r"Provider: (\S+)\s*\n\s*Name: (\S+)\s*\n\s*Location: (\S+), Base: (\S+), Semaphore: (\S+)\s*\n\s*Arguments:(.*)$",
                     re.M)


def stapsdt_notes(binary):
    """(provider, name, argument string, semaphore address) for every
    .note.stapsdt entry, as readelf prints them."""
    out = run(["readelf", "-n", "--wide", binary], check=True).stdout
    return [(m.group(1), m.group(2), m.group(6).strip(), int(m.group(5), 16)) for m in NOTE_RE.finditer(out)]


def arg_count(argstr):
    return len(argstr.split()) if argstr else 0
