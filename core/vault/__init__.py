"""vault layer."""
