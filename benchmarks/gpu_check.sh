#!/usr/bin/env bash
# One command for a GPU machine: the kernels' tests compiled for the GPU, then the FlashAttention benchmark.
# Everything lands in one folder, benchmarks/results/<gpu>_<date>/ (or the folder given as $1):
#   environment.txt      GPU, driver, torch and triton versions
#   tests.log            pytest of the Triton kernels (every test, compiled), then the other tests marked gpu
#   benchmark.log        the benchmark's progress and summary
#   flash_attention.csv, flash_attention.png, summary.md   (see benchmarks/README.md)
# About 5 minutes on an H100 or H200, most of it compiling and autotuning. Environment variables:
#   PYTHON (default python), BENCH_ARGS (extra benchmark arguments, e.g. "--quick"), TEST_TIMEOUT and
#   BENCH_TIMEOUT (seconds, default 240 and 420).
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}

if ! $PYTHON -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
    echo "gpu_check.sh needs an NVIDIA GPU (compute capability >= 8.0) and torch with CUDA; none found." >&2
    echo "On a CPU run the tests instead: python -m pytest tests/test_flash_attention.py tests/test_primer.py" >&2
    exit 2
fi

GPU=$($PYTHON -c "import re, torch; print(re.sub(r'[^A-Za-z0-9]+', '_', torch.cuda.get_device_name(0)).strip('_'))")
OUT=${1:-benchmarks/results/${GPU}_$(date +%Y-%m-%d)}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
unset PAGEDLAB_DEVICE TRITON_INTERPRET  # compile for the GPU, whatever the shell had set

{
    date -u +"%Y-%m-%d %H:%M UTC"
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>/dev/null
    $PYTHON -c "import torch, triton; from pagedlab import device; print('torch', torch.__version__, '| triton', triton.__version__); print(device.MODE.reason)"
} > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"

echo "== tests (compiled for the GPU) -> $OUT/tests.log"
start=$(date +%s)
timeout "${TEST_TIMEOUT:-240}" $PYTHON -m pytest -o addopts= -p no:cacheprovider -q -rs \
    tests/test_flash_attention.py tests/test_primer.py > "$OUT/tests.log" 2>&1
tests_rc=$?
# The rest of the course's GPU-only tests (exit code 5: there are none).
timeout "${TEST_TIMEOUT:-240}" $PYTHON -m pytest -o addopts= -p no:cacheprovider -q -rs -m gpu tests \
    --ignore=tests/test_flash_attention.py --ignore=tests/test_primer.py >> "$OUT/tests.log" 2>&1
other_rc=$?
[ "$other_rc" -eq 5 ] || [ "$other_rc" -eq 0 ] || tests_rc=$other_rc
tail -n 3 "$OUT/tests.log"
echo "tests: exit $tests_rc after $(( $(date +%s) - start )) s"

echo "== benchmark -> $OUT"
start=$(date +%s)
# shellcheck disable=SC2086  # BENCH_ARGS is a list of arguments
timeout "${BENCH_TIMEOUT:-420}" $PYTHON benchmarks/flash_attention.py --out "$OUT" ${BENCH_ARGS:-} 2>&1 \
    | tee "$OUT/benchmark.log"
bench_rc=${PIPESTATUS[0]}
timeout "${BENCH_TIMEOUT:-420}" $PYTHON benchmarks/paged_attention.py --out "$OUT" ${BENCH_ARGS:-} 2>&1 | tee -a "$OUT/benchmark.log"; [ "${PIPESTATUS[0]}" -eq 0 ] || bench_rc=1
echo "benchmark: exit $bench_rc after $(( $(date +%s) - start )) s"

echo "results in $OUT"
[ "$tests_rc" -eq 0 ] && [ "$bench_rc" -eq 0 ]
