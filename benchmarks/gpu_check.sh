#!/usr/bin/env bash
# `make benchmark` on a GPU of your own, with time to spare: benchmarks/device_run.sh --full (the benchmarks' whole
# grids with plots and summaries, autotuning over the whole configuration space, every test of the kernels, and
# timeouts 20 times those of the short session). Results in $1, else benchmarks/results/<gpu>_<date>/.
set -u
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" benchmarks/device_run.py --full "$@"
