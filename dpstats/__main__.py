"""``python -m dpstats``: the same command line as ``dpstats``."""

import sys

from .compendium.cli import main

if __name__ == "__main__":
    sys.exit(main())
