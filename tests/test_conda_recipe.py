"""conda/meta.yaml renders the way conda-build renders it on conda-forge: selectors, then jinja
with conda-build's functions (stubbed here), strictly; the result has what conda-forge asks."""
from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

jinja2 = pytest.importorskip("jinja2")
yaml = pytest.importorskip("yaml")
if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "conda"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

PLATFORMS = {
    "linux-64": dict(linux=True, osx=False, win=False, unix=True),
    "osx-arm64": dict(linux=False, osx=True, win=False, unix=True),
    "win-64": dict(linux=False, osx=False, win=True, unix=False),
}
SELECTOR = re.compile(r"^(.*?)\s*#\s*\[(.+)\]\s*$")


def select(text: str, ns: dict) -> str:
    """conda-build's selector pass: a line ending in ``# [expr]`` stays only when expr holds."""
    out = []
    for line in text.splitlines():
        m = SELECTOR.match(line)
        if m is None:
            out.append(line)
        elif eval(m.group(2), {}, dict(ns)):  # noqa: S307 - our own recipe's selectors
            out.append(m.group(1))
    return "\n".join(out) + "\n"


def load_file_data(filename: str, *args, from_recipe_dir: bool = False, **kwargs):
    """As conda-build: a relative name is read from the source (work) directory, which holds
    what source.path points at (the checkout root), unless from_recipe_dir."""
    path = (RECIPE if from_recipe_dir else ROOT) / filename
    assert path.is_file(), f"load_file_data({filename!r}): no {path}"
    return tomllib.loads(path.read_text())


def render(platform: str = "linux-64", cross: bool = False) -> dict:
    ns = {**PLATFORMS[platform], "build_platform": "linux-64" if cross else platform,
          "target_platform": platform}
    text = select((RECIPE / "meta.yaml").read_text(), ns)
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)    # conda-build's final pass
    stubs = {
        "load_file_data": load_file_data,
        "compiler": lambda lang: f"{lang}_compiler_stub",
        "stdlib": lambda lang: f"{lang}_stdlib_stub",
        "pin_compatible": lambda name, *a, **k: name,
        "PYTHON": "$PYTHON", "PREFIX": "$PREFIX", "target_platform": platform,
    }
    return yaml.safe_load(env.from_string(text).render(**stubs))


def names(reqs: list[str]) -> list[str]:
    return [r.split()[0] for r in reqs]


def test_package_comes_from_pyproject() -> None:
    meta = render()
    assert meta["package"] == {"name": PYPROJECT["project"]["name"],
                               "version": PYPROJECT["project"]["version"]}
    assert (RECIPE / meta["source"]["path"]).resolve() == ROOT   # what load_file_data reads
    assert meta["about"]["summary"] == PYPROJECT["project"]["description"]


def test_conda_forge_keys() -> None:
    meta = render()
    build = meta["requirements"]["build"]
    assert "c_compiler_stub" in build and "c_stdlib_stub" in build
    about = meta["about"]
    assert re.match(r"https://\S+$", about["home"])
    assert (ROOT / about["license_file"]).is_file()
    assert about["license"] == PYPROJECT["project"]["license"]["text"]


def test_tests_run_pip_check_and_a_pytest_subset() -> None:
    meta = render()
    test = meta["test"]
    assert "pip check" in test["commands"]
    assert {"pip", "pytest"} <= set(names(test["requires"]))
    for src in test["source_files"]:
        assert (ROOT / src).exists(), src
    pytest_cmds = [c for c in test["commands"] if c.startswith("pytest")]
    assert len(pytest_cmds) == 1
    files = [a for a in shlex.split(pytest_cmds[0])[1:] if not a.startswith("-") and a != "no:cacheprovider"]
    assert files and all((ROOT / f).is_file() for f in files), files


def test_build_dependencies_agree_with_pyproject_and_setup() -> None:
    meta = render()
    host = meta["requirements"]["host"]
    cython = next(r for r in host if r.startswith("cython"))
    wanted = next(r for r in PYPROJECT["build-system"]["requires"] if r.lower().startswith("cython"))
    assert cython.split(None, 1)[1].replace(" ", "") == wanted[len("Cython"):]
    keys = re.findall(r'Lib\("(\w+)"', (ROOT / "setup.py").read_text())
    assert sorted(e.split("=")[0] for e in meta["build"]["script_env"]) == \
        sorted(f"ZARRX_{k}_DIR" for k in keys)


def test_other_platforms_render() -> None:
    assert render("win-64")["build"]["skip"] is True
    assert "skip" not in render("osx-arm64")["build"]
    cross = render("osx-arm64", cross=True)["requirements"]["build"]
    assert "cross-python_osx-arm64" in cross and "python" in names(cross)


def _floors(reqs: list[str]) -> dict[str, str]:
    """``name -> version specifier`` of PEP 508 requirements (extras of the name dropped)."""
    out = {}
    for r in reqs:
        m = re.match(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*(.*)$", r)
        out[m.group(1).lower().replace("_", "-")] = m.group(3).replace(" ", "")
    return out


def test_run_requirements_are_pyprojects_dependencies() -> None:
    run = [r for r in render()["requirements"]["run"] if r != "python"]
    conda = {r.split()[0]: r.split(None, 1)[1].replace(" ", "") for r in run}
    assert conda == _floors(PYPROJECT["project"]["dependencies"])


def test_each_package_has_one_floor_in_every_extra() -> None:
    project = PYPROJECT["project"]
    seen: dict[str, set[str]] = {}
    for reqs in [project["dependencies"], *project["optional-dependencies"].values()]:
        for name, spec in _floors(reqs).items():
            seen.setdefault(name, set()).add(spec)
    assert {n: s for n, s in seen.items() if len(s) > 1} == {}
    build = _floors(PYPROJECT["build-system"]["requires"])
    assert build["numpy"] == _floors(project["dependencies"])["numpy"]
