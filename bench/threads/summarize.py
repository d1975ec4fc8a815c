#!/usr/bin/env python3
"""Summarizes threads_target --dumps output (one JSON line per dump): median
and p99 of the dump time, and of the spread of the threads' answer times."""
import json
import sys

rows = [json.loads(l) for l in sys.stdin if l.startswith("{")]
e = sorted(r["elapsed_ns"] / 1e6 for r in rows)
s = sorted(r["answer_spread_ns"] / 1e6 for r in rows)


def p(v, q):
    return v[min(len(v) - 1, int(q * len(v)))]


last = rows[-1]
print(f"{sys.argv[1]}: {len(rows)} dumps, {last['captured']} stacks, {last['frames']} frames; "
      f"dump median {p(e, .5):.3f} ms, p99 {p(e, .99):.3f} ms (first {rows[0]['elapsed_ns'] / 1e6:.1f} ms); "
      f"answer spread median {p(s, .5):.3f} ms, p99 {p(s, .99):.3f} ms")
