# Developer shortcuts. The two commands of the README need none of these.
PYTHON ?= .venv/bin/python

.PHONY: test bundle sync-deploy
test:  ## the whole suite (what .ci/run runs)
	bash scripts/test.sh

bundle:  ## the air-gapped bundle in dist/ (docs/air-gapped.md); needs the dev venv of scripts/test.sh
	$(PYTHON) scripts/bundle.py --out dist

sync-deploy:  ## copy deploy/'s sources (bin/ scripts, systemd/hardening.conf) to the chart, the collection and the units
	$(PYTHON) scripts/sync-deploy-copies
