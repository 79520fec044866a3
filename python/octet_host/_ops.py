"""How an operation becomes a control line, and what its answer means.

Both APIs (``octet_host.Host`` and ``octet_host.aio.Host``) build a :class:`Request`
here and hand it to the core; they differ only in how they wait for it. Their methods
are generated (``_operations.py``) as calls of :func:`reply` and :func:`call`, but for
``start`` and ``reload``, which bind services and are built here by hand.
"""

from __future__ import annotations

from typing import (
    Any,
    Callable,
    Dict,
    Generic,
    Mapping,
    Optional,
    Sequence,
    TypeVar,
    Union,
    cast,
)

from ._core import Core, Line, Subscriber
from ._future import Future
from ._generated import (
    BoundServices,
    StartReply,
)
from .errors import error_for

T = TypeVar("T")
#: A caller-chosen id (``call_id``).
Id = Union[str, int]
#: A JSON object.
Json = Dict[str, Any]
#: What ``start`` binds: names to the objects that serve them (each checked against its
#: kind's Protocol class) or to None (a frontend feature such as ``terminal_input``), or
#: the names alone.
Services = Union[BoundServices, Mapping[str, None], Sequence[str], None]


class Request(Generic[T]):
    """One operation, ready to send: ``kind`` is ``reply`` (answered by its reply),
    ``call`` (answered by its ``result`` line) or ``start`` (a reply that also binds
    the extension's services)."""

    def __init__(
        self,
        kind: str,
        line: Dict[str, Any],
        convert: Callable[[Line], T],
        *,
        progress: Optional[Subscriber] = None,
        services: Optional[Mapping[str, Any]] = None,
    ) -> None:
        self.kind = kind
        self.line = line
        self.convert = convert
        self.progress = progress
        self.services = services


def send(core: Core, request: "Request[Any]") -> "tuple[Optional[Id], Future[Line]]":
    """Sends ``request``: the call id (for calls) and the future of its answer line.

    A ``start`` binds its services before it is sent (requests come inside
    ``initialize``); a successful ``start`` or ``reload`` tells the desk the API version
    the extension negotiated as its reply is routed, whichever API waits for it."""
    if request.kind == "call":
        return core.call(request.line, request.progress)
    if request.kind != "start":
        return None, core.request(request.line)
    extension = request.line["extension"]
    if request.services is not None:
        core.desk.bind(extension, request.services)
    future = core.request(request.line)

    def negotiated(done: "Future[Line]") -> None:
        if done.exception() is None and done.result().get("ok"):
            core.desk.set_api_version(extension, done.result().get("api_version"))

    future.add_done_callback(negotiated)
    return None, future


def outcome(request: "Request[T]", line: Line) -> T:
    """The value of the answer ``line``, or its error raised."""
    if not line.get("ok"):
        error = line.get("error") or {"code": "unknown", "message": "no error object"}
        raise error_for(error, starting=request.kind == "start")
    return request.convert(line)


def _output(line: Line) -> Json:
    output = line.get("output")
    return output if isinstance(output, dict) else {"value": output}


def _started(line: Line) -> StartReply:
    return cast(StartReply, members(line))


def milliseconds(seconds: Optional[float]) -> Optional[int]:
    """A duration in seconds (the Python API's unit) as serve's whole milliseconds,
    at least 1; ``None`` stays ``None``."""
    if seconds is None:
        return None
    if seconds < 0:
        raise ValueError("a duration may not be negative")
    return max(1, round(seconds * 1000))


def _opt(line: Dict[str, Any], **members: Any) -> Dict[str, Any]:
    for key, value in members.items():
        if value is not None:
            line[key] = value
    return line


def _services(services: Services) -> Optional[Dict[str, Any]]:
    if services is None:
        return None
    if isinstance(services, Mapping):
        return dict(services)
    return {name: None for name in services}


# The requests the generated methods (``_operations.py``) build.


def members(line: Line) -> Json:
    """A reply's members: the line without ``type``, ``id`` and ``ok``."""
    return {k: v for k, v in line.items() if k not in ("type", "id", "ok")}


def member(name: str, default: Any) -> Callable[[Line], Any]:
    """A reply's member ``name`` (``default`` when it lacks it)."""
    return lambda line: line.get(name, default)


def nothing(line: Line) -> None:
    """A reply that says only that it succeeded."""
    return None


def reply(op: str, convert: Callable[[Line], T], **fields: Any) -> "Request[T]":
    """The operation ``op`` with its members ``fields`` (those that are None left out),
    answered by its reply, whose value is ``convert(reply)``."""
    return Request("reply", _opt({"op": op}, **fields), convert)


def call(
    op: str,
    extension: str,
    *,
    call_id: Optional[Id] = None,
    progress: Optional[Subscriber] = None,
    **fields: Any,
) -> "Request[Json]":
    """The call ``op`` to ``extension`` with its members ``fields``, answered by its
    ``result`` line (the output); ``progress`` gets its progress events."""
    line = _opt({"op": op, "extension": extension}, call_id=call_id, **fields)
    return Request("call", line, _output, progress=progress)


def cancel(call_id: Id) -> "Request[None]":
    """``cancel`` of the call ``call_id``."""
    return reply("cancel", nothing, call_id=call_id)


# The operations the Host classes write by hand.


def start(
    extension: str,
    services: Services,
    features: Optional[Sequence[str]],
    startup_timeout: Optional[float],
    bulk_storage: Optional[str],
) -> "Request[StartReply]":
    bound = _services(services)
    line = _opt(
        {"op": "start", "extension": extension},
        services=list(bound) if bound is not None else None,
        features=list(features) if features is not None else None,
        startup_timeout_ms=milliseconds(startup_timeout),
        bulk_storage=bulk_storage,
    )
    return Request("start", line, _started, services=bound or {})


def reload(extension: str) -> "Request[StartReply]":
    return Request("start", {"op": "reload", "extension": extension}, _started)


__all__ = ["Request", "send", "outcome", "reply", "call", "cancel", "start", "reload"]
