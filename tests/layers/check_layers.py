#!/usr/bin/env python3
"""Checks Kiln's layering (DESIGN.md, "Layout and layers"; cmake/KilnLayers.cmake).

Given build/layers.json (written at configure time), it checks three things and exits 1 with one
line per violation:
  1. includes: every `#include "<folder>/..."` or `"kiln/..."` in a layer's sources and public
     headers names a layer at or below it (and no include climbs out with "..");
  2. symbols: every Kiln symbol a layer's library needs (nm, undefined) is defined by a library
     at or below it, so no layer calls up into a higher one through a declaration of its own;
  3. enforcement: an upward include does not compile against a layer's include view (the build
     would fail), while the same layer's own headers do.

Usage: check_layers.py LAYERS_JSON SOURCE_DIR CXX
"""
import json
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def public_header_layer(layers, rel):
    """The layer owning include/kiln/<rel>, or None."""
    for name, layer in layers.items():
        for h in layer["headers"]:
            if h and (rel == h or rel.startswith(h + "/")):
                return name
    return None


def included_layer(layers, inc):
    if inc.startswith("kiln/"):
        return public_header_layer(layers, inc[len("kiln/"):])
    head = inc.split("/", 1)[0]
    return head if head in layers else None


def layer_files(layers, src, name):
    root = os.path.join(src, "src", name)
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith((".h", ".cpp", ".def")):
                yield os.path.join(d, f)
    for h in layers[name]["headers"]:
        if not h:
            continue
        p = os.path.join(src, "include", "kiln", h)
        if os.path.isdir(p):
            for d, _, files in os.walk(p):
                for f in files:
                    yield os.path.join(d, f)
        else:
            yield p


def check_includes(layers, src):
    errors = []
    for name, layer in layers.items():
        for path in layer_files(layers, src, name):
            text = open(path, encoding="utf-8", errors="replace").read()
            for inc in INCLUDE.findall(text):
                rel = os.path.relpath(path, src)
                if ".." in inc.split("/"):
                    errors.append(f"{rel}: #include \"{inc}\" climbs out of its folder; name the layer's header")
                    continue
                if "/" not in inc:
                    continue  # a file beside it, or a generated table (.def)
                owner = included_layer(layers, inc)
                if owner is None:
                    errors.append(f"{rel}: #include \"{inc}\" names no layer's header")
                elif owner not in layer["allowed"]:
                    errors.append(f"{rel} ({name}) includes \"{inc}\" of layer {owner}, which is above it")
    return errors


def symbols(lib, which):
    out = subprocess.run(["nm", "-C", "--format=posix", which, lib], capture_output=True, text=True, check=True)
    syms = set()
    for line in (l.rstrip() for l in out.stdout.splitlines()):
        if line.endswith(":") or "kiln::" not in line:
            continue
        # posix format: NAME TYPE [VALUE [SIZE]]; the name may hold spaces, the type is one letter,
        # value and size are hexadecimal (the shortest name that leaves such a tail is the name).
        m = re.match(r"^(.*?) ([A-Za-z])(?: [0-9a-f]+)?(?: [0-9a-f]+)?$", line)
        if m:
            syms.add(m.group(1))
    return syms


def check_symbols(layers):
    defined = {n: symbols(l["library"], "--defined-only") for n, l in layers.items()}
    errors = []
    for name, layer in layers.items():
        for sym in sorted(symbols(layer["library"], "--undefined-only")):
            if any(sym in defined[a] for a in layer["allowed"]):
                continue
            owners = [n for n in layers if sym in defined[n]]
            if owners:
                errors.append(f"library kiln_{name} needs {sym}, defined in kiln_{owners[0]}, a layer above it")
    return errors


def compiles(cxx, view, src, inc):
    cmd = [cxx, "-std=c++20", "-fsyntax-only", "-x", "c++", "-I", view]
    r = subprocess.run(cmd + ["-"], input=f'#include "{inc}"\n', capture_output=True, text=True)
    return r.returncode == 0


def check_enforcement(layers, src, cxx):
    # The dialects layer may include its own and the target facts' headers, never the schedule's.
    view = layers["dialects"]["view"]
    errors = []
    if not compiles(cxx, view, src, "target/swizzle.h"):
        errors.append("the dialects layer's include view cannot compile its own dependency target/swizzle.h")
    for upward in ("schedule/config.h", "kiln/compile.h"):
        if compiles(cxx, view, src, upward):
            errors.append(f"an upward include of {upward} from the dialects layer compiles: the views do not enforce")
    return errors


def self_test():
    """The include check must catch an upward include in a tree made for the purpose."""
    import tempfile
    with tempfile.TemporaryDirectory() as t:
        for layer, text in (("low", '#include "high/top.h"\n'), ("high", '#include "low/base.h"\n')):
            os.makedirs(os.path.join(t, "src", layer))
            open(os.path.join(t, "src", layer, "a.cpp"), "w").write(text)
        layers = {"low": {"allowed": ["low"], "headers": []}, "high": {"allowed": ["high", "low"], "headers": []}}
        errors = check_includes(layers, t)
    ok = len(errors) == 1 and "includes \"high/top.h\" of layer high" in errors[0]
    print("layering: self-test " + ("passed" if ok else f"failed: {errors}"))
    return ok


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return 0 if self_test() else 1
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    layers = json.load(open(sys.argv[1]))
    for layer in layers.values():
        layer["headers"] = [h for h in layer["headers"] if h]
    src, cxx = sys.argv[2], sys.argv[3]
    errors = check_includes(layers, src) + check_symbols(layers) + check_enforcement(layers, src, cxx)
    for e in errors:
        print("layering: " + e)
    print(f"layering: {len(layers)} layers, {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
