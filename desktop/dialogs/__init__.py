"""Dialogs: settings and index health."""
