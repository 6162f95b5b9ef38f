"""Frozen entry point of the `Cairn` GUI executable (the `cairn-desktop` script when installed)."""

import multiprocessing
import sys

from desktop.launch import main

if __name__ == "__main__":
    # A frozen app re-runs this executable for multiprocessing children (core/index/child_sync.py).
    multiprocessing.freeze_support()
    sys.exit(main())
