"""Settings from the environment: ``ZARRX_<SETTING>`` variables, read at import and by
``zarrx.config.refresh()``."""
import os
import subprocess
import sys

import pytest

import zarrx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOW = ("import zarrx; c = zarrx.config; "
        "print(c.threads, c.write_empty_chunks, c.consistency, c.memory_pool)")


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ZARRX_")}
    environ.update(env, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("env,expected", [
    ({}, f"{os.cpu_count()} False strict None"),
    ({"ZARRX_THREADS": "3"}, "3 False strict None"),
    ({"ZARRX_THREADS": " none "}, f"{os.cpu_count()} False strict None"),
    ({"ZARRX_WRITE_EMPTY_CHUNKS": "Yes", "ZARRX_CONSISTENCY": "none"}, f"{os.cpu_count()} True none None"),
    ({"ZARRX_WRITE_EMPTY_CHUNKS": "0", "ZARRX_MEMORY_POOL": "0"}, f"{os.cpu_count()} False strict 0"),
    ({"ZARRX_MEMORY_POOL": ""}, f"{os.cpu_count()} False strict None"),
    ({"ZARRX_OTHER": "x", "ZARR_THREADING__MAX_WORKERS": "1"}, f"{os.cpu_count()} False strict None"),
])
def test_settings_start_from_their_environment_variables(env, expected):
    done = _run(SHOW, **env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


@pytest.mark.parametrize("env,message", [
    ({"ZARRX_THREADS": "four"}, "environment variable ZARRX_THREADS: expected an int >= 1, "
                                "found 'four'"),
    ({"ZARRX_THREADS": "0"}, "environment variable ZARRX_THREADS: expected an int >= 1, found 0"),
    ({"ZARRX_WRITE_EMPTY_CHUNKS": "maybe"},
     "environment variable ZARRX_WRITE_EMPTY_CHUNKS: expected one of true, 1, yes, on, false, "
     "0, no, off, found 'maybe'"),
    ({"ZARRX_CONSISTENCY": "weak"}, "environment variable ZARRX_CONSISTENCY: expected one of "
                                    "strict, none, found 'weak'"),
    ({"ZARRX_MEMORY_POOL": "-1"}, "environment variable ZARRX_MEMORY_POOL: expected None or an "
                                  "int >= 0 (bytes), found -1"),
])
def test_a_variable_that_does_not_parse_is_an_error_naming_it(env, message):
    done = _run("import zarrx", **env)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == f"zarrx.errors.ArgumentError: {message}"


def test_refresh_rereads_the_environment_and_restores_defaults(monkeypatch):
    before = {k: zarrx.config.get(k) for k in ("threads", "write_empty_chunks", "consistency",
                                               "memory_pool")}
    try:
        zarrx.config.set(write_empty_chunks=True, consistency="none")
        monkeypatch.setenv("ZARRX_THREADS", "5")
        zarrx.config.refresh()
        assert (zarrx.config.threads, zarrx.config.write_empty_chunks,
                zarrx.config.consistency) == (5, False, "strict")
        monkeypatch.setenv("ZARRX_THREADS", "0")
        with pytest.raises(zarrx.ArgumentError, match="ZARRX_THREADS: expected an int >= 1"):
            zarrx.config.reset()
        assert zarrx.config.threads == 5           # nothing changed by the refused refresh
        monkeypatch.delenv("ZARRX_THREADS")
        zarrx.config.reset()
        assert zarrx.config.threads == os.cpu_count()
    finally:
        zarrx.config.set(**before)


def test_an_array_written_in_a_process_configured_by_the_environment(tmp_path):
    # ZARRX_WRITE_EMPTY_CHUNKS=true keeps the chunk of fill values a write makes
    def code(name):
        return (f"import zarrx; z = zarrx.create_array({str(tmp_path / name)!r}, shape=(4,), "
                "dtype='i4', chunks=(2,)); z[:] = 0; print(z.nchunks_initialized)")
    assert _run(code("a"), ZARRX_WRITE_EMPTY_CHUNKS="true").stdout.strip() == "2"
    assert _run(code("b")).stdout.strip() == "0"


def test_the_settings_module_pickles_by_reference():
    """A function pickled by value (defined in ``__main__`` or a notebook, as dask.distributed
    sends it to its workers) whose code names ``config`` carries ``zarrx.config`` with it:
    the module must pickle as its import, as every module does."""
    import pickle

    cloudpickle = pytest.importorskip("cloudpickle")
    assert pickle.loads(pickle.dumps(zarrx.config)) is zarrx.config
    # (the function's global is the settings module itself, as after ``from zarrx import
    # config``: a global naming the package would pickle the package, not its settings)
    namespace = {"__name__": "__main__", "config": zarrx.config}
    exec("def work(n):\n    with config.set(threads=1):\n        return n + config.threads\n",
         namespace)
    work = pickle.loads(cloudpickle.dumps(namespace["work"]))
    assert work(1) == 2
