"""search layer."""
