"""Every serve operation once: the control line it writes and what its answer means.

Both APIs (``octet_host.Host`` and ``octet_host.aio.Host``) build a :class:`Request`
here and hand it to the core; they differ only in how they wait for it.
"""

from __future__ import annotations

from typing import (
    Any,
    Callable,
    Dict,
    Generic,
    List,
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
    ArtifactReply,
    AutocompleteReply,
    DiscoverReply,
    GetApplicableOperationsReply,
    StartReply,
    StatusEntry,
)
from .errors import error_for

T = TypeVar("T")
#: A caller-chosen id (``call_id``).
Id = Union[str, int]
#: A JSON object.
Json = Dict[str, Any]
#: What ``start`` binds: kinds to the objects that serve them, or names alone.
Services = Union[Mapping[str, Any], Sequence[str], None]


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


def _members(line: Line) -> Json:
    return {k: v for k, v in line.items() if k not in ("type", "id", "ok")}


def _output(line: Line) -> Json:
    output = line.get("output")
    return output if isinstance(output, dict) else {"value": output}


def _started(line: Line) -> StartReply:
    return cast(StartReply, _members(line))


def _nothing(line: Line) -> None:
    return None


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


# Session.


def discover() -> "Request[DiscoverReply]":
    return Request("reply", {"op": "discover"}, lambda line: cast(DiscoverReply, _members(line)))


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


def stop(extension: str) -> "Request[Json]":
    return Request(
        "reply", {"op": "stop", "extension": extension}, lambda line: line.get("report") or {}
    )


def reload(extension: str) -> "Request[StartReply]":
    return Request("start", {"op": "reload", "extension": extension}, _started)


def artifact(extension: str, artifact_id: str) -> "Request[ArtifactReply]":
    return Request(
        "reply",
        {"op": "artifact", "extension": extension, "artifact_id": artifact_id},
        lambda line: cast(ArtifactReply, _members(line)),
    )


def status() -> "Request[List[StatusEntry]]":
    return Request(
        "reply",
        {"op": "status"},
        lambda line: cast(List[StatusEntry], list(line.get("extensions") or [])),
    )


# Calls.


def call(
    op: str,
    extension: str,
    *,
    timeout: Optional[float] = None,
    call_id: Optional[Id] = None,
    progress: Optional[Subscriber] = None,
    **members: Any,
) -> "Request[Json]":
    line = _opt(
        {"op": op, "extension": extension},
        timeout_ms=milliseconds(timeout),
        call_id=call_id,
        **members,
    )
    return Request("call", line, _output, progress=progress)


def cancel(call_id: Id) -> "Request[None]":
    return Request("reply", {"op": "cancel", "call_id": call_id}, _nothing)


# Answers.


def answer_confirmation(request_id: int, confirmed: bool) -> "Request[None]":
    return Request(
        "reply",
        {"op": "answer_confirmation", "request_id": request_id, "confirmed": confirmed},
        _nothing,
    )


def answer_input(request_id: int, value: Optional[str]) -> "Request[None]":
    return Request(
        "reply", {"op": "answer_input", "request_id": request_id, "value": value}, _nothing
    )


def service_answer(
    request_id: int, result: Optional[Json], refusal: Optional[str], message: Optional[str]
) -> "Request[None]":
    line = _opt(
        {"op": "service_answer", "request_id": request_id},
        result=result,
        refusal=refusal,
        message=message,
    )
    return Request("reply", line, _nothing)


# Notifications to extensions.


def notify(
    extension: str, method: str, params: Optional[Json], generation: Optional[int]
) -> "Request[None]":
    return Request(
        "reply",
        _opt(
            {"op": "notify", "extension": extension, "method": method, "params": params or {}},
            generation=generation,
        ),
        _nothing,
    )


def message_delta(
    extension: str, message_id: str, deltas: Union[str, Sequence[str]], generation: Optional[int]
) -> "Request[None]":
    line: Dict[str, Any] = {
        "op": "message_delta",
        "extension": extension,
        "message_id": message_id,
    }
    if isinstance(deltas, str):
        line["delta"] = deltas
    else:
        line["deltas"] = list(deltas)
    return Request("reply", _opt(line, generation=generation), _nothing)


def message_settled(extension: str, message_id: str, generation: Optional[int]) -> "Request[None]":
    return Request(
        "reply",
        _opt(
            {"op": "message_settled", "extension": extension, "message_id": message_id},
            generation=generation,
        ),
        _nothing,
    )


def terminal_revoke(extension: str, reason: str, generation: Optional[int]) -> "Request[None]":
    return Request(
        "reply",
        _opt(
            {"op": "terminal_revoke", "extension": extension, "reason": reason},
            generation=generation,
        ),
        _nothing,
    )


def autocomplete(
    text: str, cursor: int, revision: int, extension: Optional[str]
) -> "Request[AutocompleteReply]":
    return Request(
        "reply",
        _opt(
            {"op": "autocomplete", "text": text, "cursor": cursor, "revision": revision},
            extension=extension,
        ),
        lambda line: cast(AutocompleteReply, _members(line)),
    )


def lifecycle(event: str, params: Mapping[str, Any]) -> "Request[None]":
    return Request("reply", {**params, "op": "lifecycle", "event": event}, _nothing)


# Child agent sessions and resources.


def agent_report(report: Json) -> "Request[None]":
    return Request("reply", {"op": "agent_report", "report": report}, _nothing)


def agent_event(agent_id: str, event: Json) -> "Request[int]":
    return Request(
        "reply",
        {"op": "agent_event", "agent_id": agent_id, "event": event},
        lambda line: int(line["sequence"]),
    )


def get_applicable_operations(arguments: Json) -> "Request[GetApplicableOperationsReply]":
    return Request(
        "reply",
        {"op": "get_applicable_operations", "arguments": arguments},
        lambda line: cast(GetApplicableOperationsReply, _members(line)),
    )


__all__ = ["Request", "send", "outcome"]
