"""kreassign: a formal model and property-checked reference of Kafka partition reassignment.

The import root. The real code lives in the subpackages:
``kreassign.spec`` (states, actions, properties), ``kreassign.reference``
(the algorithms, pure functions) and ``kreassign.checker`` (engines, CLI).
"""

from ._version import __version__

__all__ = ["__version__"]
