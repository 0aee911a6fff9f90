# zarrx: `make test` and `make demo` work on a fresh Debian machine (as root: missing system
# packages are installed with apt-get). Everything else goes into .venv.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
DEBS   := libzstd-dev zlib1g-dev libblosc-dev liblz4-dev libdeflate-dev pkg-config
PYX    := $(shell find zarrx -name '*.pyx' -o -name '*.pxd') $(wildcard csrc/*.c csrc/*.h)

.PHONY: test demo bench build sysdeps clean

test: build
	$(PY) -m pytest -q $(PYTEST_ARGS)

demo: build
	$(PY) -m zarrx demo

bench: build
	$(VENV)/bin/pip install -q -e '.[bench]' --no-build-isolation
	$(PY) -m zarrx bench

# System libraries: install only what is missing; needs root (or sudo) and apt-get.
sysdeps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(VENV)/.deps: pyproject.toml | sysdeps
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q "setuptools>=64" wheel "Cython>=3.0" "numpy>=1.25"
	$(VENV)/bin/pip install -q -e '.[test]' --no-build-isolation
	touch $@

# In-place build of the extensions (a no-op when nothing changed).
$(VENV)/.built: $(VENV)/.deps setup.py $(PYX)
	ZARRX_BUILD_JOBS=2 $(PY) setup.py -q build_ext --inplace -j 2
	touch $@

build: sysdeps $(VENV)/.built

clean:
	rm -rf build $(VENV) zarrx/**/*.so zarrx/**/*.c
	find zarrx -name '*.so' -delete; find zarrx -name '*.c' -delete
