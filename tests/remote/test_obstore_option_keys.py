"""obstore's storage options in any case (``AWS_CONDITIONAL_PUT``, ``ENDPOINT_URL``: obstore
reads its keys in any case, as its environment variables name them) and of the wrong type
(an int timeout among the client settings): each either works or is a StoreError naming the
option, never a bare or late error."""
from __future__ import annotations

import datetime
import re

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError

obstore = pytest.importorskip("obstore")

from zarrx.store.remote import ObjectStore  # noqa: E402


@pytest.fixture
def s3_array(s3_server):
    url = s3_server.url()
    g = zarrx.open_group(url, mode="w", storage_options=s3_server.options)
    g.create_array("a", shape=(6,), chunks=(2,), dtype="i4")[...] = np.arange(6)
    return url


@pytest.mark.parametrize("key", ["AWS_CONDITIONAL_PUT", "Conditional_Put"])
def test_the_conditional_put_option_in_any_case(s3_server, s3_array, key):
    """zarrx added its own ``conditional_put`` next to the user's ``AWS_CONDITIONAL_PUT``,
    and obstore refused both (``Duplicate key aws_conditional_put provided``)."""
    so = {**s3_server.options, key: "etag"}
    z = zarrx.open_array(s3_array, path="a", mode="r+", storage_options=so)
    z[0:2] = [9, 9]
    assert z[...].tolist() == [9, 9, 2, 3, 4, 5]


def test_an_uppercase_endpoint_url_of_http_is_allowed_plain_http(s3_server, s3_array):
    """``ENDPOINT_URL`` (s3fs's name, upper case) was passed on to obstore as it was, and
    HTTP was not allowed for its ``http://`` address: every read failed with obstore's
    ``HTTP error: builder error``."""
    so = {k: v for k, v in s3_server.options.items() if k != "endpoint"}
    so["ENDPOINT_URL"] = s3_server.endpoint
    assert zarrx.open_array(s3_array, path="a", mode="r",
                            storage_options=so)[...].tolist() == list(range(6))


@pytest.mark.parametrize("so, name", [
    ({"timeout": 20}, "timeout"),
    ({"AWS_TIMEOUT": 2.5}, "AWS_TIMEOUT"),
    ({"aws_pool_max_idle_per_host": 4}, "aws_pool_max_idle_per_host"),
    ({"client_options": {"connect_timeout": 5}}, "client_options['connect_timeout']"),
    ({"allow_http": 1}, "allow_http"),
])
def test_a_client_setting_of_the_wrong_type_is_named(so, name):
    """obstore's TypeError (``'int' object is not an instance of 'str'``) named no option."""
    value = next(iter(so.values()))
    value = next(iter(value.values())) if isinstance(value, dict) else value
    with pytest.raises(StoreError, match=re.escape(
            f"ObjectStore('s3://bucket/d'): storage_options {name}: expected a ") +
            f".*found {type(value).__name__}"):
        ObjectStore("s3://bucket/d", storage_options={"endpoint": "http://127.0.0.1:9", **so})


def test_a_duration_given_as_a_timedelta_or_a_string_is_taken():
    for value in ("20s", datetime.timedelta(seconds=20)):
        ObjectStore("s3://bucket/d", storage_options={"endpoint": "http://127.0.0.1:9",
                                                      "aws_timeout": value})
