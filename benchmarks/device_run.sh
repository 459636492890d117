#!/usr/bin/env bash
# One short session on an offline GPU machine: benchmarks first, then the GPU tests, each step with its own timeout,
# everything in at most 8 files (see benchmarks/device_run.py and benchmarks/README.md). Installs nothing.
#   PYTHONUNBUFFERED=1 benchmarks/device_run.sh [results folder]     (default: $OUT, else benchmarks/results/<gpu>_<date>)
#   benchmarks/device_run.sh --dry-run /tmp/dry                       (a CPU: every step at tiny sizes)
set -u
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" benchmarks/device_run.py "$@"
