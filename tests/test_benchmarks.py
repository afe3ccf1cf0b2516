"""The benchmark scripts stay runnable: each answers --help (which imports it and what it
imports from the other scripts: one script once dropped a helper five others start from)."""

import os
import subprocess
import sys

import pytest

BENCHMARKS = os.path.join(os.path.dirname(__file__), "..", "benchmarks")
# The scripts, not the modules they share (which their --help imports).
SCRIPTS = sorted(f for f in os.listdir(BENCHMARKS) if f.endswith(".py")
                 and '__name__ == "__main__"' in open(os.path.join(BENCHMARKS, f), encoding="utf-8").read())


@pytest.mark.slow   # a process each
@pytest.mark.parametrize("script", SCRIPTS)
def test_every_benchmark_script_answers_help(script):
    result = subprocess.run([sys.executable, os.path.join(BENCHMARKS, script), "--help"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage" in result.stdout.lower()
