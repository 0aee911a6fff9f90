"""Arguments Python refuses before a zarrx function runs (a misspelt keyword, positional
arguments to keyword-only parameters, a missing argument) are ``ArgumentTypeError``s, so
``except zarrx.ZarrError`` catches them, still ``TypeError``s worded as Python's, and name the
keyword a misspelt one is closest to."""
from __future__ import annotations

import re

import pytest

import zarrx
from zarrx.errors import ArgumentTypeError

TYPOS = {
    "create_array": (lambda: zarrx.create_array({}, shape=(3,), dtype="f4", chunk=(2,)),
                     "create_array() got an unexpected keyword argument 'chunk'; did you "
                     "mean 'chunks'?"),
    "group.create_array": (lambda: zarrx.group({}).create_array("a", shape=(3,), dtype="f4",
                                                                 fillvalue=1),
                           "create_array() got an unexpected keyword argument 'fillvalue'; "
                           "did you mean 'fill_value'?"),
    "open_group": (lambda: zarrx.open_group({}, zarr_fromat=3),
                   "open_group() got an unexpected keyword argument 'zarr_fromat'; did you "
                   "mean 'zarr_format'?"),
    "create_group": (lambda: zarrx.create_group({}, atributes={}),
                     "create_group() got an unexpected keyword argument 'atributes'; did you "
                     "mean 'attributes'?"),
    "open": (lambda: zarrx.open({}, mdoe="r"),
             "open() got an unexpected keyword argument 'mdoe'; did you mean 'mode'?"),
    "open_array": (lambda: zarrx.open_array({}, shape=(3,), dtpye="f4"),
                   "open_array() got an unexpected keyword argument 'dtpye'; did you mean "
                   "'dtype'?"),
    "consolidate_metadata": (lambda: zarrx.consolidate_metadata({}, pth="a"),
                             "consolidate_metadata() got an unexpected keyword argument "
                             "'pth'; did you mean 'path'?"),
    "copy": (lambda: zarrx.copy({}, {}, overwrites=True),
             "copy() got an unexpected keyword argument 'overwrites'; did you mean "
             "'overwrite'?"),
    "no close name": (lambda: zarrx.create_array({}, shape=(3,), dtype="f4", foo=1),
                      "create_array() got an unexpected keyword argument 'foo'"),
    "positional": (lambda: zarrx.create_array({}, (3,), "f4"),
                   "create_array() takes from 0 to 1 positional arguments but 3 were given"),
    "missing": (lambda: zarrx.copy({}),
                "copy() missing 1 required positional argument: 'destination'"),
}


@pytest.mark.parametrize("case", TYPOS.values(), ids=list(TYPOS))
def test_refused_arguments_are_zarr_errors_naming_the_closest_keyword(case):
    call, message = case
    with pytest.raises(ArgumentTypeError, match=f"^{re.escape(message)}$") as info:
        call()
    assert isinstance(info.value, TypeError)

