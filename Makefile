# Two commands do all the set-up on a fresh machine:
#   make book   build the site into _build/html (creates .venv on first use)
#   make test   lint, build the book with warnings as errors, run every test and every notebook (nbval),
#               then every notebook again on portable kernels and one thread
# For everyday work:
#   make check  lint, import contracts, tests/unit and the chapters' source checks of tests/book: no browser,
#               no built book, no notebook run, no pretrained model (tests/conftest.py has the lanes)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BOOK_FLAGS := -W -n --keep-going
PYTEST := $(BIN)/python -m pytest
# Kernels every x86 CPU has, one thread and MKL's reproducible mode: the stored outputs must read the same
# here as with the machine's own fastest kernels (AVX-512, AMX) and several threads.
PORTABLE := ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 MKL_CBWR=COMPATIBLE
CHECK := not site and not slow and not pretrained

.PHONY: book test check lint format notebooks weights decoder minilm-heads lab bench clean slides book-students pdf

$(STAMP): requirements.txt requirements-nodeps.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -r requirements-nodeps.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . $(BOOK_FLAGS)
	@echo "Open the book: $(CURDIR)/_build/html/index.html"

# Two workers (the machines have 2 cores), each file on one worker, so that a notebook's cells run in order in
# one kernel and a module's browser or JupyterLab is started once.
test: $(STAMP) lint book
	$(PYTEST) -n 2 --dist loadfile --nbval --nbval-current-env --durations=15 tests chapters
	$(PORTABLE) $(PYTEST) -n 2 --dist loadfile --nbval --nbval-current-env -m notebook chapters

check: $(STAMP) lint
	$(PYTEST) -n 2 --dist loadfile -m "$(CHECK)" tests/unit tests/book

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Re-run every chapter (or NB=chapters/x.ipynb) in place to refresh its stored outputs, then `make test`.
notebooks: $(STAMP)
	$(PORTABLE) $(BIN)/python -m scripts.execute_notebooks $(NB)

# Retrain the toy models of the appendix (Heads in toy models) into mha/chapters/data/heads_weights.safetensors
# and heads_runs.json, which records the wall time of its run (423 s on 2 cores when last made), then
# `make notebooks NB=chapters/appendix_toy_heads.ipynb`.
weights: $(STAMP)
	$(BIN)/python -m mha.chapters.train_heads

# Retrain the decoder of "Heads that work together" (2 layers of 4 heads, attention only) on the documentation
# that CPython ships (pydoc_data.topics) into mha/chapters/data/decoder_weights.safetensors and decoder_log.json
# (about 5 minutes of CPU on one core, 284-303 s here; the log records the wall and CPU time of its run).
decoder: $(STAMP)
	$(BIN)/python -m mha.chapters.train_decoder

# Census, single-head ablations and greedy pruning of all-MiniLM-L6-v2's 72 heads for "What trained heads do",
# into mha/chapters/data/minilm_heads.json, which records the wall and CPU time of each part of its run, and the
# 8-bit attention maps of the corpus for the chapter's static viewer, into mha/chapters/data/minilm_attention.json.
minilm-heads: $(STAMP)
	$(BIN)/python -m mha.chapters.minilm_heads
	$(BIN)/python -m mha.chapters.minilm_viewer

lab: $(STAMP)
	$(BIN)/jupyter lab chapters/

# The page benchmarks read the built book (the explorer's page, and chapter 1's MiniLM box with its weights).
bench: book
	$(BIN)/python -m benchmarks.bench_attention
	$(BIN)/python -m benchmarks.bench_widgets
	$(BIN)/python -m benchmarks.bench_static_explorer
	$(BIN)/python -m benchmarks.bench_pretrained
	$(BIN)/python -m benchmarks.bench_variants
	$(BIN)/python -m benchmarks.bench_linear
	$(BIN)/python -m benchmarks.bench_page_minilm
	$(BIN)/python -m benchmarks.bench_jupyterlab

clean:
	rm -rf _build .pytest_cache .ruff_cache .hypothesis

# For lecturers and readers offline (teaching.md). A reveal.js deck per chapter, shaped from copies of the
# notebooks (scripts/tag_slides.py; the chapters are not changed), into _build/slides/<chapter>.slides.html,
# with everything they load copied beside them: open one from disk, no network needed.
slides: $(STAMP)
	$(BIN)/python -m scripts.build_slides --out _build/slides

# The student edition: no solution in its pages, sources, notebooks or PDF, and no launch button. The site goes
# to _build/students/html, the notebooks to _build/students/notebooks, the PDF to _build/students/*.pdf.
book-students: $(STAMP)
	$(BIN)/python -m scripts.student_edition --out _build/students --pdf

# The book as one PDF, printed by headless Chromium from the built site: _build/pdf/multi-head-attention.pdf,
# with a title page, one page numbering and the solutions gathered at the end of each chapter.
pdf: book
	$(BIN)/python -m scripts.build_pdf --site _build/html --out _build/pdf/multi-head-attention.pdf --edition full
