"""Make ``tests/store_contract.py`` importable as ``store_contract`` from any test directory."""
import os
import sys

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
