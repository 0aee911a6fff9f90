"""Build zarrx's Cython extensions against the system (or conda) codec libraries.

Every ``zarrx/**/*.pyx`` becomes one extension. A module names what it links in its first
lines, so adding a kernel never means editing this file::

    # zarrx-libs: ZSTD            (keys of LIBS below)
    # zarrx-sources: csrc/zx_crc32c.c

Each library is found from ``ZARRX_<KEY>_DIR`` (a prefix holding include/ and lib/), then
``CONDA_PREFIX``, then pkg-config, then /usr and /usr/local. A library found through
``ZARRX_<KEY>_DIR`` is also recorded as a run-time search path (rpath) of the extensions that
link it, so they load it from there without ``LD_LIBRARY_PATH``.

Required: libzstd, zlib, c-blosc 1.x and liblz4; a missing one stops the build with a message
naming the package to install. Optional: libdeflate. Without it the build still succeeds and
gzip/zlib are compressed and decompressed by zlib alone (the same streams, more slowly);
``zarrx.codecs._zlib.backend()`` says which one a build uses.

Cython: 3.0 or newer (``noexcept`` and the 3.0 semantics); every compiler directive is in
COMPILER_DIRECTIVES below, none in the .pyx files. Switches: ZARRX_DEBUG=1 (-O0 -g),
ZARRX_SANITIZE=1 (ASan+UBSan), ZARRX_SANITIZE=fuzzer (ASan+UBSan plus libFuzzer coverage
for the fuzz harnesses; needs CC=clang), ZARRX_BUILD_JOBS=<n> (parallel cythonize).
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import threading

import numpy
from Cython.Build import cythonize
from Cython.Compiler import Options
from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext


@dataclass(frozen=True)
class Lib:
    key: str          # ZARRX_<key>_DIR
    pc_name: str      # pkg-config module
    link: str         # -l name
    header: str       # a header that must exist
    deb: str          # Debian package
    conda: str        # conda-forge package
    required: bool = True


LIBS = {
    lib.key: lib
    for lib in (
        Lib("ZSTD", "libzstd", "zstd", "zstd.h", "libzstd-dev", "zstd"),
        Lib("ZLIB", "zlib", "z", "zlib.h", "zlib1g-dev", "zlib"),
        Lib("BLOSC", "blosc", "blosc", "blosc.h", "libblosc-dev", "blosc"),
        Lib("LZ4", "liblz4", "lz4", "lz4.h", "liblz4-dev", "lz4-c"),
        Lib("DEFLATE", "libdeflate", "deflate", "libdeflate.h", "libdeflate-dev", "libdeflate",
            required=False),
    )
}

COMPILER_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": True,
    "wraparound": False,
    "initializedcheck": True,
    "cdivision": True,
    "embedsignature": True,
}
# The hints Cython 3.1+ prints about bounds checks are decisions already made (checks stay on
# outside proven kernels), not news: they would bury the build's progress lines.
if "show_performance_hints" in Options.get_directive_defaults():
    COMPILER_DIRECTIVES["show_performance_hints"] = False


@dataclass
class Flags:
    include_dirs: list[str]
    library_dirs: list[str]
    libraries: list[str]
    runtime_dirs: list[str]       # rpath entries: set for libraries from ZARRX_<KEY>_DIR


def _prefix_flags(prefix: str, lib: Lib, *, rpath: bool = False) -> Flags | None:
    inc = os.path.join(prefix, "include")
    if not os.path.exists(os.path.join(inc, lib.header)):
        return None
    libdirs = [d for d in (os.path.join(prefix, "lib"), os.path.join(prefix, "lib64")) if os.path.isdir(d)]
    return Flags([inc], libdirs, [lib.link], list(libdirs) if rpath else [])


def _pkg_config(lib: Lib) -> Flags | None:
    if not shutil.which("pkg-config"):
        return None
    try:
        out = subprocess.run(["pkg-config", "--cflags", "--libs", lib.pc_name],
                             capture_output=True, text=True, check=True).stdout.split()
    except subprocess.CalledProcessError:
        return None
    flags = Flags([], [], [], [])
    for tok in out:
        if tok.startswith("-I"):
            flags.include_dirs.append(tok[2:])
        elif tok.startswith("-L"):
            flags.library_dirs.append(tok[2:])
        elif tok.startswith("-l"):
            flags.libraries.append(tok[2:])
    return flags if flags.libraries else None


def find_lib(lib: Lib) -> Flags | None:
    env = f"ZARRX_{lib.key}_DIR"
    if root := os.environ.get(env):
        flags = _prefix_flags(os.path.abspath(root), lib, rpath=True)
        if flags is None:
            sys.exit(f"zarrx: {env}={root!r} has no include/{lib.header}; "
                     f"point it at the prefix that holds include/ and lib/ of {lib.pc_name}")
        return flags
    if (conda := os.environ.get("CONDA_PREFIX")) and (flags := _prefix_flags(conda, lib)):
        return flags
    if flags := _pkg_config(lib):
        return flags
    for prefix in ("/usr", "/usr/local"):
        if flags := _prefix_flags(prefix, lib):
            return flags
    if lib.required:
        sys.exit(
            f"zarrx: the C library {lib.pc_name} was not found (no {env}, not in CONDA_PREFIX, "
            f"not known to pkg-config). Install it: Debian/Ubuntu 'apt-get install {lib.deb}', "
            f"conda 'conda install -c conda-forge {lib.conda}'; or set {env}=<prefix> "
            f"to a prefix holding include/{lib.header} and lib/."
        )
    return None


def _need_clang() -> None:
    """libFuzzer's coverage instrumentation (-fsanitize=fuzzer-no-link) exists in clang only."""
    cc = os.environ.get("CC", "")
    try:
        version = subprocess.run([*cc.split(), "--version"], capture_output=True, text=True,
                                 check=True).stdout if cc else ""
    except (OSError, subprocess.CalledProcessError):
        version = ""
    if "clang" not in version:
        sys.exit(f"zarrx: ZARRX_SANITIZE=fuzzer needs clang: set CC to a clang compiler "
                 f"(found CC={cc!r}); ZARRX_SANITIZE=1 builds ASan+UBSan with any compiler")


_HEADER = re.compile(r"^#\s*zarrx-(libs|sources):\s*(.*)$")


def _module_needs(path: str) -> tuple[list[str], list[str]]:
    libs: list[str] = []
    sources: list[str] = []
    with open(path, encoding="utf-8") as f:
        for line in f.readlines()[:20]:
            if m := _HEADER.match(line.strip()):
                (libs if m.group(1) == "libs" else sources).extend(m.group(2).split())
    return libs, sources


def extensions() -> list[Extension]:
    debug = os.environ.get("ZARRX_DEBUG") == "1"
    sanitize = os.environ.get("ZARRX_SANITIZE", "")
    if sanitize not in ("", "0", "1", "fuzzer"):
        sys.exit(f"zarrx: ZARRX_SANITIZE={sanitize!r}: expected 1 (ASan+UBSan) or fuzzer "
                 "(ASan+UBSan plus libFuzzer coverage, with clang)")
    cflags = ["-O0", "-g"] if debug else ["-O3"]
    ldflags: list[str] = []
    if sanitize in ("1", "fuzzer"):
        san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g"]
        if sanitize == "fuzzer":
            _need_clang()
            san[0] += ",fuzzer-no-link"
        cflags += san
        ldflags += san
    cflags += ["-Wno-unused-function", "-Wno-unreachable-code"]
    found: dict[str, Flags | None] = {}
    exts = []
    for pyx in sorted(glob.glob("zarrx/**/*.pyx", recursive=True)):
        libs, sources = _module_needs(pyx)
        inc = [numpy.get_include(), "csrc"]
        libdirs: list[str] = []
        rpaths: list[str] = []
        link: list[str] = []
        # the C API of the oldest numpy zarrx runs with (pyproject's floor): numpy 1.25's
        # headers would otherwise target 1.19 and hide what the kernels call
        # (PyDataMem_SetHandler, 1.22), leaving an undefined symbol
        macros = [("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION"),
                  ("NPY_TARGET_VERSION", "NPY_1_25_API_VERSION")]
        for key in libs:
            if key not in found:
                found[key] = find_lib(LIBS[key])
            flags = found[key]
            if flags is None:
                continue
            macros.append((f"ZARRX_HAVE_{key}", "1"))
            inc += flags.include_dirs
            libdirs += flags.library_dirs
            rpaths += flags.runtime_dirs
            link += flags.libraries
        name = pyx[:-4].replace("/", ".")
        exts.append(Extension(name, [pyx, *sources], include_dirs=inc, library_dirs=libdirs,
                              runtime_library_dirs=rpaths, libraries=link, define_macros=macros,
                              extra_compile_args=cflags, extra_link_args=ldflags))
    return cythonize(exts, compiler_directives=COMPILER_DIRECTIVES,
                     nthreads=int(os.environ.get("ZARRX_BUILD_JOBS", "0")) or None,
                     quiet=False)       # "[3/9] Cythonizing ..." lines: progress of a first build


class BuildExt(build_ext):
    """``build_ext`` that says which extension it compiles (``[3/9] compiling ...``), even
    with ``-q``: the first build takes minutes and should show that it is moving."""

    _done = 0
    _lock = threading.Lock()

    def build_extension(self, ext: Extension) -> None:
        with self._lock:
            BuildExt._done += 1
            n = BuildExt._done
        up_to_date = not self.force and all(
            os.path.exists(self.get_ext_fullpath(ext.name))
            and os.path.getmtime(self.get_ext_fullpath(ext.name)) >= os.path.getmtime(src)
            for src in ext.sources)
        if not up_to_date:
            print(f"zarrx: [{n}/{len(self.extensions)}] compiling {ext.name}", file=sys.stderr,
                  flush=True)
        super().build_extension(ext)


# ZARRX_METADATA_ONLY=1: no extensions (the Makefile registers an editable install of the
# checkout, with its entry points and the zarrx command, after compiling in place once).
setup(ext_modules=[] if os.environ.get("ZARRX_METADATA_ONLY") else extensions(),
      cmdclass={"build_ext": BuildExt},
      packages=find_packages(include=["zarrx", "zarrx.*"]),
      package_data={"*": ["*.pxd", "*.pyi", "py.typed"]})
