"""Cairn's desktop app (PySide6): windows, panels, dialogs, workers and the settings store."""
