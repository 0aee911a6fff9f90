import sys

from zarrx.cli import main

sys.exit(main())
