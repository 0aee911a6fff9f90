#!/bin/sh
# make fuzz: build the extensions under ASan+UBSan, run each harness named on the command line
# for FUZZ_RUNS executions (or FUZZ_TIME seconds), then restore the normal build.
#
# With clang (FUZZ_CLANG) the extensions are built with -fsanitize=fuzzer-no-link as well, so
# libFuzzer sees coverage of the C/Cython kernels too; the ASan runtime and libFuzzer are then
# preloaded as one library (build/fuzz/asan_with_fuzzer.so, made from clang's own archives).
# With gcc, coverage is that of the Python code (atheris) and the sanitizers still check the
# kernels. New inputs go to build/fuzz/corpus/<harness>; crashes to build/fuzz/artifacts.
set -u
PY=${PY:-.venv/bin/python}
RUNS=${FUZZ_RUNS:-200000}
TIME=${FUZZ_TIME:-0}
CLANG=${FUZZ_CLANG:-}
OUT=build/fuzz
mkdir -p "$OUT/artifacts"

build() {
    ZARRX_BUILD_JOBS=2 "$@" "$PY" setup.py -q build_ext --inplace --force -j 2
}

if [ -n "$CLANG" ]; then
    rt=$(dirname "$("$CLANG" -print-file-name=libclang_rt.asan-x86_64.a)")
    tmp=$(mktemp -d)
    # the static ASan runtime minus its .preinit_array (not allowed in a shared library),
    # linked whole with libFuzzer's: libFuzzer's coverage callbacks replace ASan's weak ones
    cp "$rt/libclang_rt.asan-x86_64.a" "$tmp/asan.a" && ar d "$tmp/asan.a" asan_preinit.cpp.o &&
    "$CLANG" -shared -o "$OUT/asan_with_fuzzer.so" -Wl,--whole-archive "$tmp/asan.a" \
        "$rt/libclang_rt.asan_cxx-x86_64.a" "$rt/libclang_rt.fuzzer_no_main-x86_64.a" \
        -Wl,--no-whole-archive -lpthread -ldl -lrt -lm -lstdc++ || exit 1
    rm -rf "$tmp"
    build env CC="$CLANG" ZARRX_SANITIZE=fuzzer || exit 1
    preload="$PWD/$OUT/asan_with_fuzzer.so"
    echo "fuzz: $CLANG build, coverage of Python code and of the extensions"
else
    build env ZARRX_SANITIZE=1 || exit 1
    preload="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
    echo "fuzz: gcc build (no clang found), coverage of Python code; sanitizers on the extensions"
fi

rc=0
for h in "$@"; do
    mkdir -p "$OUT/corpus/$h"
    PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" LD_PRELOAD="$preload" \
    ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=64 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        nice -n 10 "$PY" "fuzz/$h.py" -runs="$RUNS" -max_total_time="$TIME" -timeout=30 \
        -rss_limit_mb=4096 -malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$h-" \
        ${FUZZ_FLAGS:-} "$OUT/corpus/$h" "fuzz/corpus/$h" > "$OUT/$h.log" 2>&1
    status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$h.log" | tail -1)
    echo "$h: ${runs:-?} executions, exit status $status (log: $OUT/$h.log)"
    if [ $status -ne 0 ]; then
        rc=1
        tail -40 "$OUT/$h.log"
    fi
done

build env ZARRX_SANITIZE= || rc=1
exit $rc
