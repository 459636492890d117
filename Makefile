# pagedlab: the two commands of the quick start are `make lab` and `make test`.
# Every target first makes sure the environment is set up (tools/bootstrap.py: the active
# virtualenv/conda env, else .venv/), so each works on a fresh clone.

PYTHON ?= python3
BOOTSTRAP := $(PYTHON) tools/bootstrap.py
PY = $(shell $(BOOTSTRAP) --which)
# Two pytest workers. conftest.py says which tests stay together (a notebook's cells, a file's fixtures) and which
# start first.
WORKERS ?= 2
# Each worker (and each notebook kernel it starts) computes on one thread: with as many workers as cores, torch's
# own thread pool would only make them wait for each other (a 2-core run of notebook 10 took minutes, not seconds).
TEST_ENV ?= OMP_NUM_THREADS=1
SUBMISSIONS ?= submissions
# make site SOLUTIONS=0: a site without solutions/, for a class whose grades count.
SOLUTIONS ?= 1
# make test PROOFS=1: also the grader's exhaustive proofs, every planted bug and attack row on every seed and the
# whole synthetic class in the sandbox (conftest.py's --proofs); about 45 minutes in all on a 2-core CPU.
PROOFS ?= 0
# More grader options, e.g. --unsafe where bubblewrap cannot create a sandbox, or --shard 1/4.
GRADE_FLAGS ?=
# Jupyter refuses to run as root (containers, some cloud machines) unless told it is on purpose.
LAB_FLAGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: setup lab test test-fast test-browser site test-site notebooks exercises grade benchmark clean

setup:
	@$(BOOTSTRAP)

# Serve the repository root, so the file browser reaches exercises/ and solutions/ too, and open the first lecture.
lab: setup                  ## set up, then open the course in JupyterLab
	$(PY) -m jupyter lab $(LAB_FLAGS) --ServerApp.root_dir="$(CURDIR)" notebooks/00_setup.ipynb

test: setup                 ## set up, then run unit tests, every notebook under nbval, and the meta-tests
	$(TEST_ENV) $(PY) -m pytest -n $(WORKERS) --dist loadscope --no-loadscope-reorder --durations=40 $(if $(filter 1,$(PROOFS)),--proofs,)

test-fast: setup            ## unit and meta-tests only (no lecture notebooks)
	$(TEST_ENV) $(PY) -m pytest -n $(WORKERS) --dist loadscope --no-loadscope-reorder tests

# Each worker starts its own JupyterLab and Chromium; a worker that runs out of tests takes some of the other's.
test-browser: setup         ## the course in JupyterLab in headless Chromium (Debian's chromium; skips without one)
	$(TEST_ENV) $(PY) -m pytest -o addopts= -p no:cacheprovider -ra -n $(WORKERS) --dist worksteal tests/browser

# The course site from the stored outputs (nothing is executed): Sphinx, warnings as errors, MathJax from npm.
site: setup                 ## build the course site into build/site/html (SOLUTIONS=0 leaves the solutions out)
	PAGEDLAB_SITE_SOLUTIONS=$(SOLUTIONS) $(PY) docs/site/build_site.py

test-site: setup            ## build the site, check its links, pictures and labels, read six pages in Chromium at desktop and phone width, tap the menus
	$(TEST_ENV) $(PY) -m pytest -o addopts= -p no:cacheprovider -ra tests/site

notebooks: setup            ## re-execute lectures and solutions in place (CPU), then regenerate exercises
	$(PY) -m pagedlab.authoring.execute notebooks solutions
	$(PY) -m pagedlab.authoring.exercises

exercises: setup            ## regenerate exercises/ from solutions/
	$(PY) -m pagedlab.authoring.exercises

grade: setup                ## grade a class: make grade SUBMISSIONS=path/to/class
	$(PY) -m pagedlab.grading $(SUBMISSIONS) --out grades $(GRADE_FLAGS)

benchmark: setup            ## on an NVIDIA GPU: GPU tests + FlashAttention benchmark into benchmarks/results/
	PYTHON=$(PY) bash benchmarks/gpu_check.sh

clean:
	rm -rf grades .pytest_cache **/__pycache__
