#!/usr/bin/env python3
"""Runs a command and inverts its status: succeeds only when the command fails without crashing.

A crash (death by a signal, e.g. an abort) is a failure of `not` too, so a test written with
`not %kiln ...` cannot pass on an internal error.
"""
import subprocess
import sys

result = subprocess.run(sys.argv[1:])
sys.exit(0 if result.returncode > 0 else 1)
