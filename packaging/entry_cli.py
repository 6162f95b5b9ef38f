"""Frozen entry point of the console `cairn` executable (the `cairn` script when installed)."""

import multiprocessing

from core.cli.main import entry

if __name__ == "__main__":
    # A frozen app re-runs this executable for multiprocessing children (core/index/child_sync.py).
    multiprocessing.freeze_support()
    entry()
