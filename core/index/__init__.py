"""index layer.

Whoosh is imported first through `core.index.whoosh_pin` (its version checked, and the
standard-library modules it imports without using kept out of a cold search).
"""

from core.index import whoosh_pin as _whoosh_pin  # noqa: F401
