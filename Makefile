# zarrx: `make test` and `make demo` work on a fresh Debian machine (as root: missing system
# packages are installed with apt-get). Everything else goes into .venv.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
DEBS   := libzstd-dev zlib1g-dev libblosc-dev liblz4-dev libdeflate-dev pkg-config nginx netcdf-bin gdal-bin bindfs zip unzip libarchive-tools
PYX    := $(shell find zarrx -name '*.pyx' -o -name '*.pxd') $(wildcard csrc/*.c csrc/*.h)

.PHONY: test demo bench build sysdeps clean sanitize fuzz docs wheel

test: build
	$(PY) -m pytest -q $(PYTEST_ARGS)

demo: build
	$(PY) -m zarrx demo

bench: build $(VENV)/.extra-bench
	$(PY) -m zarrx bench

# An optional-dependencies extra of pyproject.toml (docs, dist) installed into the venv without
# rebuilding zarrx: `make docs` needs only the sources, `make wheel` builds its own.
$(VENV)/.extra-%: pyproject.toml | $(VENV)/.deps
	$(PY) packaging/requirements.py $* > $(VENV)/$*-requirements.txt
	$(VENV)/bin/pip install -q -r $(VENV)/$*-requirements.txt
	touch $@

# The documentation site (mkdocs, material theme, API reference from the docstrings) in site/;
# --strict turns every warning (a broken link, a missing page) into an error.
docs: $(VENV)/.extra-docs
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict -q

# A binary wheel for pip users without a compiler: built against the system libraries, then
# `auditwheel repair` bundles the codec libraries it links (zlib, part of every manylinux
# system, excepted) into zarrx.libs/ and tags it manylinux; the libraries' license files go into
# the wheel's dist-info/licenses/. Result: dist/zarrx-<version>-<python>-manylinux_*.whl.
wheel: build $(VENV)/.extra-dist
	rm -rf dist/raw && rm -f dist/zarrx-*.whl
	ZARRX_BUILD_JOBS=2 $(VENV)/bin/pip wheel . --no-deps --no-build-isolation -q -w dist/raw
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/auditwheel repair -w dist dist/raw/zarrx-*.whl
	$(PY) packaging/wheel_licenses.py dist/zarrx-*-manylinux*.whl
	rm -rf dist/raw

# The Cython/C kernels under AddressSanitizer + UndefinedBehaviorSanitizer, driven by the fuzz
# and hostile-input tests; the normal build is restored afterwards.
SANITIZE_TESTS := tests/test_local_box_read.py tests/test_local_box_write.py tests/store/test_local_fast_write.py tests/store/test_shard_index.py tests/store/test_shard_corrupt.py \
	tests/codecs/test_hostile.py tests/codecs/test_clib_zstd.py tests/codecs/test_clib_blosc.py tests/codecs/test_blosc_own_shuffle.py \
	tests/codecs/test_clib_lz4.py tests/codecs/test_clib_zlib.py tests/codecs/test_clib_crc32c.py \
	tests/codecs/test_clib_checksum.py \
	tests/codecs/test_bounded_decode.py tests/codecs/test_kernel_status.py tests/test_gather.py \
	tests/test_indexing_properties.py tests/test_indexing_plans.py tests/test_indexing_errors.py \
	tests/test_array_properties.py tests/test_sharded_arrays.py \
	tests/test_concurrent_writes.py tests/store/test_shard_store.py \
	tests/store/test_local_fast_read.py tests/test_local_reads.py tests/test_read_outputs.py \
	tests/store/test_values.py tests/test_outpool_handler.py tests/test_sanitized_fuzz.py \
	tests/test_missing_chunk_reads.py tests/test_index_array_layout.py tests/test_document_values.py \
	tests/codecs/test_object_codecs.py tests/test_nested_shard_transposes.py \
	tests/test_shard_index_codecs.py tests/metadata/test_json_hostile.py tests/test_bool_bytes.py \
	tests/codecs/test_encode_many.py tests/test_small_chunk_writes.py tests/test_point_plans.py \
	tests/test_outer_copies.py tests/store/test_dict_listing.py tests/test_sanitized_kernels.py \
	tests/test_sanitized_kernels2.py tests/test_sanitized_dirlist.py tests/test_local_sparse_reads.py \
	tests/test_small_chunk_reads.py tests/test_hostile_sizes.py tests/test_hostile_small_chunks.py \
	tests/test_hostile_writes.py \
	tests/store/test_local_generations.py tests/test_group_chains.py \
	tests/store/test_local_recent_generations.py tests/test_batch_writes.py \
	tests/test_small_chunk_point_reads.py tests/test_shard_outer_reads.py \
	tests/test_partial_write_batches.py tests/test_read_window_order.py \
	tests/test_shard_read_kernels.py tests/test_shard_read_calls.py tests/test_partial_write_kinds.py \
	tests/store/test_batch_methods.py tests/test_local_batch_concurrency.py tests/test_store_subclass_batches.py \
	tests/test_local_shard_kernel.py tests/test_local_shard_hostile.py tests/test_point_writes.py \
	tests/test_filter_partial_writes.py tests/test_local_shard_buffers.py tests/test_memory_shard_kernel.py \
	tests/test_shard_kernel_random_hostile.py tests/test_shard_pack_kernel.py
# A huge allocation fails as it does without ASan (allocator_may_return_null: a MemoryError the
# library turns into its own error, not an abort). pytest captures stderr, where a report of a
# process the sanitizers stop would be lost with it: reports go to build/sanitize/ and are
# printed after the run.
SANITIZE_LOG := $(CURDIR)/build/sanitize/report
sanitize: build
	ZARRX_SANITIZE=1 ZARRX_BUILD_JOBS=2 $(PY) setup.py -q build_ext --inplace --force -j 2
	rm -rf build/sanitize && mkdir -p build/sanitize
	LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:log_path=$(SANITIZE_LOG) \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$(SANITIZE_LOG) \
	$(PY) -m pytest -q -p no:cacheprovider $(SANITIZE_TESTS); rc=$$?; \
	grep -h -v "failed to allocate" build/sanitize/report.* 2>/dev/null; \
	ZARRX_BUILD_JOBS=2 $(PY) setup.py -q build_ext --inplace --force -j 2; exit $$rc

# Coverage-guided fuzzing (atheris) of each harness in fuzz/ for FUZZ_RUNS executions, or
# FUZZ_TIME seconds, against the ASan+UBSan extensions; the normal build is restored afterwards.
# clang is installed when missing (as sysdeps installs libraries); with it the extensions carry
# libFuzzer coverage too (see fuzz/README.md and fuzz/run.sh).
FUZZ_RUNS ?= 200000
FUZZ_TIME ?= 0
FUZZ_HARNESSES ?= $(basename $(notdir $(wildcard fuzz/fuzz_*.py)))
FUZZ_DEBS := clang libclang-rt-dev
FUZZ_CLANG ?= $(firstword $(foreach c,clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14,\
	$(shell command -v $(c) 2>/dev/null)))
fuzz: build
	@$(MAKE) --no-print-directory sysdeps DEBS="$(FUZZ_DEBS)" || echo "fuzz: no clang; gcc it is"
	@$(PY) -c 'import atheris' 2>/dev/null || $(VENV)/bin/pip install -q 'atheris>=2.3'
	PY=$(PY) FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_TIME=$(FUZZ_TIME) FUZZ_CLANG=$(FUZZ_CLANG) \
	FUZZ_FLAGS='$(FUZZ_FLAGS)' sh fuzz/run.sh $(FUZZ_HARNESSES)

# System libraries: install only what is missing; needs root (or sudo) and apt-get.
sysdeps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

# The first `make` takes a few minutes (most of it compiling); each step says what it does.
$(VENV)/.deps: pyproject.toml | sysdeps
	@echo "zarrx: [1/3] Python environment $(VENV): build tools, numpy and the test dependencies (a minute or two)"
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q "setuptools>=70.1,<77" "Cython>=3.0" "numpy>=1.25"
	$(PY) packaging/requirements.py --core test > $(VENV)/test-requirements.txt
	$(VENV)/bin/pip install -q -r $(VENV)/test-requirements.txt
	touch $@

# In-place build of the extensions (a no-op when nothing changed); then, once, an editable
# install of the checkout without extensions (ZARRX_METADATA_ONLY=1), which registers the
# `zarrx` command and the xarray engine without compiling everything a second time.
$(VENV)/.built: $(VENV)/.deps setup.py $(PYX)
	@echo "zarrx: [2/3] compiling the Cython/C extensions (only what changed; several minutes the first time)"
	ZARRX_BUILD_JOBS=2 $(PY) setup.py -q build_ext --inplace -j 2
	@if [ ! -f $(VENV)/.linked ]; then \
	  echo "zarrx: [3/3] registering this checkout in $(VENV) (import zarrx, the zarrx command, the xarray engine)"; \
	  ZARRX_METADATA_ONLY=1 $(VENV)/bin/pip install -q --no-deps --no-build-isolation -e . && touch $(VENV)/.linked; \
	fi
	touch $@

build: sysdeps $(VENV)/.built

clean:
	rm -rf build dist site $(VENV) zarrx/**/*.so zarrx/**/*.c
	find zarrx -name '*.so' -delete; find zarrx -name '*.c' -delete
