# Two commands do all the set-up on a fresh machine:
#   make book   build the site into _build/html, and the Chinese site into _build/html/zh (creates .venv on first use)
#   make test   lint, build the book with warnings as errors, run every test and every notebook (nbval): the
#               one gate, what CI runs; each phase prints how long it took
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
# Two workers (the machines have 2 cores); tests/conftest.py puts each test in an xdist group (a notebook's
# cells, a page's checks, a module) and sends the heaviest groups first, so the two finish close together.
XDIST := -n 2 --dist loadgroup --no-loadscope-reorder
CHECK := not site and not slow and not pretrained

.PHONY: book test check lint format notebooks weights decoder minilm-heads smollm2-heads lab bench clean slides book-students pdf

# pip installs without compiling every module to bytecode (--no-compile: 50 s -> 20 s on two cores; most of
# torch, transformers and sphinx is never imported here); Python compiles what is imported on its first import
# and keeps it, so the bytecode is written here even where the shell says not to (PYTHONDONTWRITEBYTECODE).
unexport PYTHONDONTWRITEBYTECODE
PIP := $(BIN)/python -m pip install --quiet --no-compile
$(STAMP): requirements.txt requirements-nodeps.txt pyproject.toml book/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -r requirements.txt
	$(PIP) --no-deps -r requirements-nodeps.txt
	$(PIP) --no-deps --no-build-isolation -e . -e ./book
	touch $(STAMP)

# The English site and the Chinese one (zh/, scripts/zh_book.py) inside it, built at the same time on the two
# cores: neither reads what the other writes (the Chinese pages load the English site's assets only in the
# browser). The Chinese build's log goes to _build/zh/build.log; its warnings and errors to the terminal.
book: $(STAMP)
	@mkdir -p _build/zh
	@start=$$(date +%s); \
	( $(BIN)/python -m scripts.zh_book > _build/zh/build.log; status=$$?; \
	  echo "make: the Chinese site took $$(( $$(date +%s) - start )) s"; exit $$status ) & zh=$$!; \
	$(BIN)/jupyter-book build . $(BOOK_FLAGS); en=$$?; \
	echo "make: the English site took $$(( $$(date +%s) - start )) s"; \
	wait $$zh; zh=$$?; \
	if [ $$zh -ne 0 ]; then tail -n 20 _build/zh/build.log; echo "the Chinese site failed (_build/zh/build.log)"; fi; \
	[ $$en -eq 0 ] && [ $$zh -eq 0 ]
	@echo "Open the book: $(CURDIR)/_build/html/index.html (中文版: $(CURDIR)/_build/html/zh/index.html)"

# Every test and every notebook, once: nbval executes each chapter on this machine's own kernels and compares
# its outputs with the stored ones, which `make notebooks` made on portable kernels (CONTRIBUTING.md, "Which
# run proves what"). The log ends with the 25 slowest tests and each notebook's time.
test: $(STAMP) lint book
	@start=$$(date +%s); \
	$(PYTEST) $(XDIST) --nbval --nbval-current-env --durations=25 tests chapters; status=$$?; \
	echo "make: the tests and notebooks took $$(( $$(date +%s) - start )) s"; exit $$status

check: $(STAMP) lint
	$(PYTEST) $(XDIST) -m "$(CHECK)" tests/unit tests/book

lint: $(STAMP)
	@start=$$(date +%s); \
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/lint-imports; status=$$?; \
	echo "make: lint took $$(( $$(date +%s) - start )) s"; exit $$status

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Re-run every chapter (or NB=chapters/x.ipynb) in place on portable kernels to refresh its stored outputs
# (scripts/execute_notebooks.py), carry them into the Chinese notebooks (scripts/zh_sync.py), draw the static
# figures whose English pictures changed once more in Chinese (scripts/zh_plots.py), then `make test`.
notebooks: $(STAMP)
	$(BIN)/python -m scripts.execute_notebooks $(NB)
	$(BIN)/python -m scripts.zh_sync
	$(BIN)/python -m scripts.zh_plots

# Retrain the toy models of the appendix (Heads in toy models) into book/chapters/data/heads_weights.safetensors
# and heads_runs.json, which records the wall time of its run (423 s on 2 cores when last made), then
# `make notebooks NB=chapters/appendix_toy_heads.ipynb`.
weights: $(STAMP)
	$(BIN)/python -m book.chapters.train_heads

# Retrain the decoder of "Heads that work together" (2 layers of 4 heads, attention only) on the documentation
# that CPython ships (pydoc_data.topics) into book/decoder/data/decoder_weights.safetensors and decoder_log.json
# (about 5 minutes of CPU on one core, 284-303 s here; the log records the wall and CPU time of its run).
decoder: $(STAMP)
	$(BIN)/python -m book.decoder.train

# Census, single-head ablations and greedy pruning of all-MiniLM-L6-v2's 72 heads for "What trained heads do",
# into book/minilm/data/minilm_heads.json, which records the wall and CPU time of each part of its run, and the
# 8-bit attention of every head on the corpus, which the chapter's box draws without the model, into
# book/minilm/data/minilm_attention.json.
minilm-heads: $(STAMP)
	$(BIN)/python -m book.minilm.census
	$(BIN)/python -m book.minilm.stored

# Census of SmolLM2-135M-Instruct's 270 heads, its attention sink, grouped-query sharing, the loss with each head
# (and each key/value group) off, and induction on random tokens written twice, for "What trained heads do" and
# "Heads that work together", into book/smollm2/data/smollm2_heads.json, which records the wall and CPU time of
# each part of its run (a few minutes on 2 cores).
smollm2-heads: $(STAMP)
	$(BIN)/python -m book.smollm2.census

lab: $(STAMP)
	$(BIN)/jupyter lab chapters/

# The page benchmarks read the built book (the explorer's page, chapter 1's MiniLM box with its weights, and the
# decoder box of "Heads that work together").
bench: book
	$(BIN)/python -m benchmarks.bench_attention
	$(BIN)/python -m benchmarks.bench_widgets
	$(BIN)/python -m benchmarks.bench_static_explorer
	$(BIN)/python -m benchmarks.bench_pretrained
	$(BIN)/python -m benchmarks.bench_smollm2
	$(BIN)/python -m benchmarks.bench_variants
	$(BIN)/python -m benchmarks.bench_linear
	$(BIN)/python -m benchmarks.bench_page_minilm
	$(BIN)/python -m benchmarks.bench_page_decoder
	$(BIN)/python -m benchmarks.bench_jupyterlab

clean:
	rm -rf _build .pytest_cache .ruff_cache .hypothesis

# For lecturers and readers offline (teaching.md). A reveal.js deck per chapter, shaped from copies of the
# notebooks (scripts/tag_slides.py; the chapters are not changed), into _build/slides/<chapter>.slides.html,
# with everything they load copied beside them: open one from disk, no network needed. The Chinese decks go to
# _build/slides/zh/ and use the same _assets/.
slides: $(STAMP)
	$(BIN)/python -m scripts.build_slides --out _build/slides
	$(BIN)/python -m scripts.build_slides --lang zh --out _build/slides/zh

# The student edition: no solution in its pages, sources, notebooks or PDF, and no launch button. The site goes
# to _build/students/html, the notebooks to _build/students/notebooks, the PDF to _build/students/*.pdf; the
# Chinese edition to _build/students/html/zh, _build/students/notebooks/zh and _build/students/zh/*.pdf.
book-students: $(STAMP)
	$(BIN)/python -m scripts.student_edition --out _build/students --pdf
	$(BIN)/python -m scripts.student_edition --out _build/students --pdf --lang zh

# The book as one PDF, printed by headless Chromium from the built site: _build/pdf/multi-head-attention.pdf,
# with a title page, one page numbering and the solutions gathered at the end of each chapter; the Chinese book
# to _build/pdf/zh/multi-head-attention.pdf.
pdf: book
	$(BIN)/python -m scripts.build_pdf --site _build/html --out _build/pdf/multi-head-attention.pdf --edition full
	$(BIN)/python -m scripts.build_pdf --site _build/html/zh --out _build/pdf/zh/multi-head-attention.pdf \
		--edition full --lang zh
