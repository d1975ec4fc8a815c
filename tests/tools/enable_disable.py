#!/usr/bin/env python3
"""probekit enable / disable against a running program built here: a gated
probe's arguments start being evaluated when enable opens its gate (memory
and kernel modes), stop when disable (or the end of the kernel-mode command)
closes it, the semaphore goes back to exactly what it was, and bad requests
fail with their own messages. Needs root (writes another process's memory,
opens uprobes)."""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import PROBEKIT, expect, finish, need, run, skip, tmpdir  # noqa: E402

if os.geteuid() != 0:
    skip("needs root: writes /proc/PID/mem and opens uprobes")
need("gcc")

SPEC = """provider app {
  probe tick(long n);
  probe other(int x);
};
"""
PROG = r"""
#include <stdio.h>
#include <unistd.h>
#include "app.h"
static long evaluated;
static long next_value(void) { return ++evaluated; }
int main(int argc, char **argv) {
  FILE *count = fopen(argv[argc - 1], "w");
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");
  for (;;) {
    APP_TICK_GATED(next_value());
    APP_OTHER_GATED((int)next_value());
    rewind(count);  /* the count so far, always in the same 21 bytes */
    fprintf(count, "%20ld\n", evaluated);
    fflush(count);
    usleep(2000);
  }
}
"""

work = tmpdir()
with open(f"{work}/app.d", "w") as f:
    f.write(SPEC)
with open(f"{work}/prog.c", "w") as f:
    f.write(PROG)
run([PROBEKIT, "compile", f"{work}/app.d", "-o", f"{work}/app.h"], check=True)
run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", f"{work}/prog", f"{work}/prog.c"], check=True)
env = dict(os.environ, PROBEKIT_STATE_DIR=f"{work}/state")

prog = subprocess.Popen([f"{work}/prog", f"{work}/count"], stdout=subprocess.PIPE, text=True)
assert prog.stdout.readline().strip() == "ready"
pid = prog.pid


def evaluated():
    """The program's latest count of evaluated gated arguments."""
    for _ in range(100):
        with open(f"{work}/count") as f:
            text = f.read().strip()
        if text:
            return int(text)
        time.sleep(0.01)
    raise AssertionError("the program writes no count")


def gates():
    out = run([PROBEKIT, "list", "-p", str(pid), "--format", "json"], check=True).stdout
    doc = json.loads(out)
    res = {}
    for obj in doc["objects"] if isinstance(doc, dict) else doc:
        for p in obj["probes"]:
            g = p.get("gate") or {}
            res[p["name"]] = g.get("external")
    return res


def growing():
    a = evaluated()
    time.sleep(0.2)
    return evaluated() > a


try:
    expect(not growing(), "closed gates: no gated argument is evaluated")

    # Memory mode: +1 on app:tick's semaphore, until disable.
    r = run([PROBEKIT, "enable", "-p", str(pid), "--mode", "memory", "app:tick"], env=env)
    expect(r.returncode == 0 and "app:tick" in r.stdout and "external 0 -> 1" in r.stdout,
           f"enable --mode memory reports the change ({r.stdout.strip()} {r.stderr.strip()})")
    expect(growing(), "memory mode: the gated argument is evaluated")
    g = gates()
    expect(g.get("tick") == 1 and g.get("other") == 0, f"list -p shows tick open, other closed ({g})")
    r = run([PROBEKIT, "disable", "-p", str(pid), "--format", "json"], env=env)
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    expect(r.returncode == 0 and doc.get("action") == "disabled" and
           [(x["name"], x["external_before"], x["external_after"]) for x in doc.get("gates", [])] == [("tick", 1, 0)],
           f"disable closes exactly what enable opened ({r.stdout.strip()} {r.stderr.strip()})")
    expect(not growing(), "after disable: no gated argument is evaluated")
    expect(gates().get("tick") == 0, "after disable: the semaphore is back to 0")
    r = run([PROBEKIT, "disable", "-p", str(pid)], env=env)
    expect(r.returncode == 1 and "nothing to close" in r.stderr, "a second disable has nothing to close")

    # Kernel mode: held while the command runs, released when it ends.
    holder = subprocess.Popen([PROBEKIT, "enable", "-p", str(pid), "--mode", "kernel", "tick", "other"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    first = holder.stdout.readline()
    expect("enabled 2 probes" in first, f"enable --mode kernel reports two probes ({first.strip()})")
    time.sleep(0.1)
    expect(growing(), "kernel mode: gated arguments are evaluated while the command runs")
    g = gates()
    expect(g.get("tick") == 1 and g.get("other") == 1, f"kernel mode: both semaphores are 1 ({g})")
    holder.send_signal(signal.SIGINT)
    out, _ = holder.communicate(timeout=10)
    expect(holder.returncode == 0 and "released 2 probes (signal)" in out, f"Ctrl-C releases the holds ({out.strip()})")
    expect(not growing() and gates().get("tick") == 0, "after the kernel-mode command: gates closed again")

    # SIGKILL leaves nothing behind in kernel mode.
    holder = subprocess.Popen([PROBEKIT, "enable", "-p", str(pid), "--mode", "kernel", "tick"],
                              stdout=subprocess.PIPE, text=True, env=env)
    holder.stdout.readline()
    holder.kill()
    holder.wait()
    time.sleep(0.1)
    expect(gates().get("tick") == 0, "kernel mode killed with SIGKILL: the kernel closed the gate")

    r = run([PROBEKIT, "enable", "-p", str(pid), "--duration", "0.3", "tick"], env=env)
    expect(r.returncode == 0 and "released 1 probe (duration)" in r.stdout, "--duration ends the hold")

    # Errors.
    r = run([PROBEKIT, "enable", "-p", "999999999", "tick"], env=env)
    expect(r.returncode == 1 and "no process" in r.stderr.lower(), f"no such process ({r.stderr.strip()})")
    r = run([PROBEKIT, "enable", "-p", str(pid), "nomatch*"], env=env)
    expect(r.returncode == 1 and "no gated probe matches 'nomatch*'" in r.stderr, f"a glob that matches nothing ({r.stderr.strip()})")
    r = run([PROBEKIT, "enable", "-p", str(pid), "--mode", "bogus", "tick"], env=env)
    expect(r.returncode != 0 and "bogus" in r.stderr, "an unknown mode is refused")
    expect(prog.poll() is None, "the traced program is still running")
finally:
    prog.kill()
    prog.wait()
finish()
