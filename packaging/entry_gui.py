"""Frozen entry point of the `Cairn` GUI executable (the `cairn-desktop` script when installed)."""

import sys

from desktop.app import main

if __name__ == "__main__":
    sys.exit(main())
