# Developer shortcuts. The two commands of the README need none of these.
PYTHON ?= .venv/bin/python

.PHONY: test bundle
test:  ## the whole suite (what .ci/run runs)
	bash scripts/test.sh

bundle:  ## the air-gapped bundle in dist/ (docs/air-gapped.md); needs the dev venv of scripts/test.sh
	$(PYTHON) scripts/bundle.py --out dist
