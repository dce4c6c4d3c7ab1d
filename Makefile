# The project's interface. Every target installs what it needs into a local virtual environment first.
#   make book                      fetch the open datasets missing from the cache (when online), execute every chapter
#                                  (paper-scale defaults) and build _build/html
#   make chapter NB=rq2 PARAMS="-p epsilon 0.2 -p dataset toxicity-synthetic"
#                                  re-execute that chapter alone with papermill parameters, then rebuild the HTML
#                                  (other chapters: their last executed notebooks, or left out until executed)
#   make test                      unit, statistical, notebook (nbval) and browser tests
#   make test-fast                 the same but the slow tests (book build, chapter runs, packaging, signals, pools): the edit-test loop
#   make test-boundscheck          the reference tests with numba's bounds checks (a kernel's index out of its array)
#   make bench                     engine benchmark (benchmarks/README.md)
#   make data                      download the registered real datasets into the cache
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
JOBS ?= 2
TEST_JOBS ?= 2
BUILD ?= $(CURDIR)/_build
OUT ?= $(CURDIR)
SRC := $(BUILD)/src
# the chapters: the notebooks of _toc.yml in its order, but the provenance page (made last, from their records)
CHAPTERS := $(filter-out provenance,$(patsubst notebooks/%,%,$(shell sed -n 's|^ *- file: \(notebooks/[a-z0-9_]*\) *$$|\1|p' _toc.yml)))
NOTEBOOKS := $(CHAPTERS) provenance
PARAMS ?=

export ANALYSIS_CACHE_DIR ?= $(BUILD)/cache
export BOOK_BUILD_DIR := $(BUILD)
# The dataset cache: $$ANNOTATION_DATA_DIR if set; else the project's shared data folder where one exists
# (development and CI machines); else the user cache that `make data` fills.
SHARED_DATA := $(abspath $(CURDIR)/../shared/data)
ifeq ($(origin ANNOTATION_DATA_DIR),undefined)
ifneq ($(wildcard $(SHARED_DATA)),)
export ANNOTATION_DATA_DIR := $(SHARED_DATA)
endif
endif

.PHONY: install test test-fast test-boundscheck bench book chapter html browser data clean

# The package itself needs only the engine's dependencies; make installs the extras for the book and the tests.
EXTRAS ?= book,test,dask,parquet,report

$(STAMP): pyproject.toml config/ipython_kernel_config.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# --quiet does not hide setuptools' notice about editable installs, which the build backend prints as a warning.
	@# pip byte-compiles on one core; compileall on all of them (75 s -> 55 s on two cores). Files that do not compile
	@# (a package's Python 2 examples, say) are skipped, as pip skips them; the bytecode only speeds up imports.
	PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet --no-compile -e '.[$(EXTRAS)]'
	$(PY) -m compileall -q -j 0 $(VENV)/lib >/dev/null 2>&1 || true
	mkdir -p $(VENV)/etc/ipython && cp config/ipython_kernel_config.py $(VENV)/etc/ipython/
	touch $(STAMP)

install: $(STAMP)

# Debian's Chromium and its driver, for the browser test (skipped with a reason where they cannot be installed).
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) \
	    >/dev/null 2>&1 || echo "could not install chromium; the browser test will skip"; }

# two workers, a test file to each at a time (the tests of the small book build share one, which builds it once), in
# the order of tests/conftest.py: the longest files first, so that neither worker ends the run alone on one
XDIST = -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder
# The tests start some hundred Python processes (workers, notebook kernels, commands), each importing the package and
# pytest's rewritten tests: where the shell sets PYTHONDONTWRITEBYTECODE, each would compile them from source again.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest
test: install browser
	$(PYTEST) -q $(XDIST)

# the edit-test loop: every test but the slow ones (the book build, chapter runs, packaging, signals, worker pools, ten
# million rows, the statistical level checks of five seconds or more)
test-fast: install
	$(PYTEST) -q $(XDIST) -m "not slow and not packaging"

# The kernels index without numba's wrap of negative indices and without bounds checks (analysis/engine/indices.py):
# here every plan of the reference tests runs with numba's bounds checks on, an index outside its array an error.
# The kernels compile afresh into a numba cache of their own: a cached kernel was compiled without the checks.
test-boundscheck: install
	rm -rf $(BUILD)/numba-boundscheck
	NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$(BUILD)/numba-boundscheck $(PYTEST) -q -n $(TEST_JOBS) tests/test_reference.py

bench: install
	$(PY) benchmarks/bench_grid.py --jobs $(JOBS)

# execute NAME PARAMS: text notebook -> ipynb -> papermill (with its progress bar) -> executed notebook in the book's
# source tree, moved into place only once every cell ran (config/execute_chapter.py; Ctrl-C stops it cleanly)
execute = mkdir -p $(BUILD)/notebooks $(SRC)/notebooks && $(VENV)/bin/jupytext --quiet --to ipynb --output $(BUILD)/notebooks/$(1).ipynb notebooks/$(1).md && \
	$(PY) config/execute_chapter.py $(BUILD)/notebooks/$(1).ipynb $(SRC)/notebooks/$(1).ipynb \
	  --cwd $(CURDIR) --kernel python3 --log-level WARNING $(2)

# The chapters run $(JOBS) at a time (one chapter's serial parts leave a core idle), each one's output shown as it
# ends: the longest first (minutes at book size: benchmarks/README.md), so that short ones fill the last minutes,
# then the others in _toc.yml's order. The timing chapter runs after them, alone, so that no chapter shares its cores.
TIMING := speed
LONGEST := realdata rq1 why compare rq2 rq4
BOOK_ORDER := $(filter $(CHAPTERS),$(LONGEST)) $(filter-out $(LONGEST) $(TIMING),$(CHAPTERS))
book: install
	@# the registered open datasets missing from the cache, where the network answers within seconds; else the
	@# chapters say what is missing (the front page lists them) and the build goes on
	$(PY) -m analysis datasets fetch --all --missing --if-online || true
	@# every kernel compiled once, $(JOBS) processes at a time, before the chapters' processes need them (a fresh
	@# install: about 50 s on two cores, where each chapter run side by side compiled the same kernels again)
	$(PY) -m analysis.experiment.warmup --jobs $(JOBS)
	$(MAKE) --no-print-directory -j $(JOBS) --output-sync=line $(addprefix executed-,$(BOOK_ORDER))
	$(MAKE) --no-print-directory $(addprefix executed-,$(filter $(TIMING),$(CHAPTERS)))
	$(MAKE) html
	@$(PY) -c "from analysis.experiment.cache import ResultCache, default_cache_dir; print('cell cache:', ResultCache(default_cache_dir()).computations())"

executed-%:
	@echo "executing chapter $*"
	@$(call execute,$*,$(PARAMS))

# The chapters that have no executed notebook yet, besides NB: make chapter leaves them out of the HTML (built
# without -W, since the pages that cite them then warn) instead of executing them at paper scale first.
UNEXECUTED = $(filter-out $(NB),$(foreach nb,$(CHAPTERS),$(if $(wildcard $(SRC)/notebooks/$(nb).ipynb),,$(nb))))

chapter: install
	@test -n "$(NB)" || { echo "usage: make chapter NB=rq2 PARAMS='-p epsilon 0.2'"; exit 2; }
	@test -f notebooks/$(NB).md || { echo "no chapter '$(NB)'; the chapters: $(CHAPTERS)"; exit 2; }
	$(call execute,$(NB),$(PARAMS))
	@$(if $(UNEXECUTED),echo "not executed yet and left out of this build: $(UNEXECUTED) (make book executes them)",true)
	$(MAKE) html STRICT=$(if $(UNEXECUTED),,-W)

STRICT ?= -W
html: install
	$(call execute,provenance,)
	mkdir -p $(SRC) && rm -rf $(SRC)/book && cp -r _config.yml _toc.yml book $(SRC)/
	$(VENV)/bin/jupyter-book build $(SRC) --path-output $(OUT) $(STRICT) -n --keep-going
	@echo "book: $(OUT)/_build/html/index.html"

data: install
	$(PY) -m analysis datasets fetch --all

clean:
	rm -rf _build .pytest_cache build dist
