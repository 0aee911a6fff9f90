"""A command given ``--json`` prints one JSON document on standard output whatever happens:
its report, or on a failure ``{"error": ..., "kind": ..., "exit_status": ...}`` (the message
also on standard error, as without ``--json``)."""
from __future__ import annotations

import json

import pytest

import zarrx
from zarrx import cli


@pytest.fixture
def data(tmp_path):
    z = zarrx.create_array(str(tmp_path / "a.zarr"), shape=(4,), chunks=(2,), dtype="u1")
    z[...] = 1
    (tmp_path / "broken.zarr").mkdir()
    (tmp_path / "broken.zarr" / "zarr.json").write_text('{"zarr_format": 3, "node_')
    return tmp_path


@pytest.mark.parametrize("argv, status, kind", [
    (["info", "--json", "{t}/missing.zarr"], 3, "error"),
    (["ls", "--json", "{t}/broken.zarr"], 3, "error"),
    (["info", "--json", "{t}/broken.zarr"], 3, "error"),
    (["chunk", "--json", "{t}/a.zarr", "9"], 3, "error"),
    (["check", "--json", "{t}/missing.zarr"], 3, "error"),
    (["check", "--json", "--fill-corrupt", "{t}/a.zarr"], 2, "usage"),
    (["check", "--json", "--workers", "0", "{t}/a.zarr"], 2, "usage"),
    (["info", "--json"], 2, "usage"),
    (["ls", "--json", "--no-such-option", "{t}/a.zarr"], 2, "usage"),
])
def test_a_failing_command_given_json_prints_one_json_document(data, capsys, argv, status,
                                                                kind):
    # (before: nothing on standard output, so `zarrx info --json x | jq` read no document)
    assert cli.main([a.format(t=data) for a in argv]) == status
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc == {"error": err.strip(), "kind": kind, "exit_status": status}
    assert err.count("\n") == 1 and "Traceback" not in err


def test_json_reports_are_unchanged_and_alone(data, capsys):
    assert cli.main(["check", "--json", str(data / "a.zarr")]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []
    assert cli.main(["check", "--json", str(data / "broken.zarr")]) == 1   # found: a report
    assert json.loads(capsys.readouterr().out)["findings"][0]["kind"] == "metadata"


def test_without_json_a_failure_prints_nothing_on_standard_output(data, capsys):
    assert cli.main(["info", str(data / "missing.zarr")]) == 3
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("argv, shown", [
    (["info", "http://a:PW1@127.0.0.1:1/x", "http://b:PW2@127.0.0.1:1/y?sig=PW3"],
     "unrecognized arguments: http://127.0.0.1:1/y"),
    (["check", "--workers", "s3://KEY:PW4@bucket/x", "y"], "found 's3://bucket/x'"),
    (["check", "--json", "--temp-age", "http://u:PW5@127.0.0.1:1/x", "y"],
     "found 'http://127.0.0.1:1/x'"),
])
def test_a_usage_error_quoting_a_url_does_not_print_its_secret(capsys, argv, shown):
    # (before: "unrecognized arguments: http://b:PW2@127.0.0.1:1/y?sig=PW3", secret and all)
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert shown in err and "PW" not in out + err
