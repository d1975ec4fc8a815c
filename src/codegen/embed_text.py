#!/usr/bin/env python3
"""Turns a text file into a C++ source defining it as a string, so the probe
compiler can write include/probekit/marker.h into every generated header
without the header needing an include path."""
import sys

src, out, name = sys.argv[1:4]
text = open(src, encoding="utf-8").read()
delim = "probekit_embed"
assert f"){delim}\"" not in text
with open(out, "w", encoding="utf-8") as f:
    f.write(f'// Generated from {src.split("/")[-1]} at build time.\n'
            f'extern const char {name}[];\n'
            f'const char {name}[] = R"{delim}({text}){delim}";\n')
