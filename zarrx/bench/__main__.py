"""``python -m zarrx.bench [options]``: the same as ``zarrx bench [options]``."""
import sys

from zarrx.bench import main

sys.exit(main(sys.argv[1:]))
