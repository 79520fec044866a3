"""Host octet extensions from Python.

``octet_host.Host`` runs the ``octet-host serve`` sidecar this package installs and makes
each serve operation (docs/serve-protocol.md) a typed method; ``octet_host.aio.Host`` is
the same for asyncio. Service kinds are bound as Python objects, typed by the Protocol
classes generated from the method table (``ComposerService``, ...).
"""

from ._binary import find_binary
from ._call import ServiceCall
from ._core import SUPPORTED_SERVE_PROTOCOLS
from ._events import ClientEvent, Event
from ._generated import *  # noqa: F401,F403  (the TypedDicts and Protocol classes)
from ._generated import OPS, SERVICE_CLASSES, SERVICE_KINDS
from ._session import Session
from ._slice import ask_short_slice as prompt_wakeups
from .errors import *  # noqa: F401,F403
from .errors import OctetHostError, Refusal, ServeError
from .host import Host, PendingCall
from .progress import progress_bar

__version__ = "0.1.0"

__all__ = [
    "Host",
    "PendingCall",
    "Session",
    "Event",
    "ClientEvent",
    "ServiceCall",
    "Refusal",
    "OctetHostError",
    "ServeError",
    "OPS",
    "SERVICE_CLASSES",
    "SERVICE_KINDS",
    "SUPPORTED_SERVE_PROTOCOLS",
    "find_binary",
    "progress_bar",
    "prompt_wakeups",
]
