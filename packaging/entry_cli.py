"""Frozen entry point of the console `cairn` executable (the `cairn` script when installed)."""

import sys

from core.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
