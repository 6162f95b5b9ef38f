"""The `cairn` command line, over the same engine the app uses."""
