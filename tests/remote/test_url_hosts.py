"""http(s) URLs whose host or port does not parse, and IPv6 hosts in printed addresses."""
from __future__ import annotations

import re

import pytest

import zarrx
from zarrx import cli
from zarrx.errors import StoreError
from zarrx.store.remote.urls import redact


@pytest.mark.parametrize("url, why", [
    ("https://[::1", "Invalid IPv6 URL"),
    ("http://[zz]/x", "'zz' does not appear to be an IPv4 or IPv6 address"),
    ("http://host:99999/x", "Port out of range 0-65535"),
    ("http://host:abc/x", "Port could not be cast to integer value as 'abc'"),
])
def test_a_url_whose_host_does_not_parse_is_a_store_error(url, why):
    # (before: ValueError from urllib, a traceback from the zarrx command)
    message = (f"{url.split(':')[0]}:// URL: expected a host name or address and an optional "
               f"port from 0 to 65535, found {url!r} ({why})")
    with pytest.raises(StoreError, match=re.escape(message)):
        zarrx.open(url, mode="r")


def test_the_command_says_so_on_one_line(tmp_path, capsys):
    src = str(tmp_path / "a.zarr")
    zarrx.create_array(src, shape=(2,), dtype="u1")
    for argv in (["info", "https://[::1/d.zarr"], ["copy", src, "https://u:secret@[::1/d"]):
        assert cli.main(argv) == 3
        err = capsys.readouterr().err
        assert err.startswith("zarrx: https:// URL: expected a host name") and \
            err.count("\n") == 1 and "secret" not in err


def test_an_ipv6_host_is_printed_with_its_brackets():
    # (before: the '::' of the address was taken for an fsspec chain: '<unparsable URL>::1]...')
    assert redact("http://[::1]:8080/d.zarr?token=x") == "http://[::1]:8080/d.zarr"
    assert redact("https://user:pw@[fe80::1]/d") == "https://[fe80::1]/d"
    assert redact("zip://k::https://u:p@host/a.zip?q=1") == "zip://k::https://host/a.zip"
    assert redact("simplecache::s3://bucket/k") == "simplecache::s3://bucket/k"
