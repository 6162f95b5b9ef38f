"""Frozen entry point of the one Linux executable: `Cairn` is the app, the `cairn` link beside it the command line.

On Linux a console and a windowed executable are the same kind of file, so one
executable serves both names and the folder carries one copy of the Python
archive instead of two (~10 MB). The name it was started by decides:
`dist/Cairn/cairn` is a symbolic link to `Cairn`. Windows (console vs windowed
subsystem) and macOS keep two executables (entry_gui.py, entry_cli.py).
"""

import multiprocessing
import os
import sys

CLI_NAMES = ("cairn",)  # case-sensitive: `Cairn` is the app

if __name__ == "__main__":
    # A frozen app re-runs this executable for multiprocessing children (core/index/child_sync.py).
    multiprocessing.freeze_support()
    if os.path.basename(sys.argv[0]) in CLI_NAMES:
        from core.cli.main import entry

        entry()
    from desktop.launch import main as gui_main

    sys.exit(gui_main())
