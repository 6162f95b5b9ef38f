"""Widgets of the main window; each receives the controller it shows."""
