"""The exceptions of the client: one hierarchy that mirrors serve's error codes.

Every error serve reports (in a `reply` or a `result` line) is raised as the subclass
of :class:`ServeError` its ``code`` names, carrying the whole error object; faults of the
client itself (the binary missing, killed, or writing a line it cannot read) are
:class:`OctetHostError` subclasses too, so ``except OctetHostError`` catches them all.

A service handler refuses a request by raising :class:`Refusal` (or one of its
subclasses); it is not an error of the client.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Type

from ._error_codes import ERROR_CODES

__all__ = [
    "OctetHostError",
    "BinaryNotFound",
    "UnsupportedServeProtocol",
    "HostLost",
    "ProtocolError",
    "ServeError",
    "ControlLineError",
    "UnknownCallId",
    "UnknownRequestId",
    "StartError",
    "NotStarted",
    "NotReady",
    "Parked",
    "NotDeclared",
    "RemoteError",
    "Cancelled",
    "DeadlineExceeded",
    "TransportLost",
    "InvalidResult",
    "Declined",
    "RefusedResponse",
    "RequestTooLarge",
    "Overloaded",
    "InvalidRequest",
    "ResourceRefused",
    "HostShutDown",
    "NotificationRefused",
    "ReportRefused",
    "DiscoveryRefused",
    "Refusal",
    "error_for",
]


class OctetHostError(Exception):
    """The base of every exception the client raises."""


class BinaryNotFound(OctetHostError):
    """No ``octet-host`` binary: neither ``OCTET_HOST_BIN``, the package's own, nor PATH."""


class UnsupportedServeProtocol(OctetHostError):
    """The binary speaks a serve protocol version this client does not know."""

    def __init__(self, version: object, supported: "tuple[int, ...]") -> None:
        self.version = version
        self.supported = supported
        super().__init__(
            f"the octet-host binary speaks serve protocol {version!r}, and this client "
            f"knows only {', '.join(map(str, supported))}; install the matching "
            "octet-host package, or point OCTET_HOST_BIN at a matching binary"
        )


class ProtocolError(OctetHostError):
    """serve wrote a line the client cannot read (not JSON, not an object, no type)."""


class ServeError(OctetHostError):
    """An error serve reported: ``code`` is stable, ``message`` is for people.

    ``details`` holds the whole error object (``field``, ``call_id``, ``reason``, ...)
    and ``rpc_code`` the JSON-RPC code where one applies.
    """

    code: str = ""

    def __init__(self, error: Mapping[str, Any]) -> None:
        self.error: Dict[str, Any] = dict(error)
        self.code = str(error.get("code", type(self).code))
        self.message = str(error.get("message", ""))
        rpc = error.get("rpc_code")
        self.rpc_code: Optional[int] = rpc if isinstance(rpc, int) else None
        super().__init__(f"{self.code}: {self.message}")

    @property
    def details(self) -> Dict[str, Any]:
        """The error's members besides ``code``, ``message`` and ``rpc_code``."""
        return {k: v for k, v in self.error.items() if k not in ("code", "message", "rpc_code")}


class HostLost(ServeError):
    """The serve process ended (killed, crashed, or closed its output) under the client.

    Every call and request still waiting fails with it; ``exit_status`` is the
    process's return code when it is known.
    """

    code = "host_lost"

    def __init__(self, message: str, exit_status: Optional[int] = None) -> None:
        super().__init__({"code": "host_lost", "message": message})
        self.exit_status = exit_status


class ControlLineError(ServeError):
    """serve could not read a control line the client sent (``invalid_json``,
    ``missing_field``, ``wrong_type``, ``invalid_value``, ``unknown_op``, ...)."""


class UnknownCallId(ServeError):
    """``cancel`` named no active call."""


class UnknownRequestId(ServeError):
    """An answer named no open question or service request."""


class StartError(ServeError):
    """``start`` or ``reload`` failed. ``fix`` is the text that says what to do."""

    @property
    def fix(self) -> str:
        """The message with the details that name the cause: what a user acts on."""
        parts = [self.message]
        for key in ("discovered", "diagnostics", "stderr_tail", "first_non_json_line"):
            if self.error.get(key):
                parts.append(f"{key}: {self.error[key]}")
        return "\n".join(parts)


class NotStarted(ServeError):
    """The extension was not started in this session."""


class NotReady(ServeError):
    """The extension's generation is not ready (``state`` says where it is)."""


class Parked(ServeError):
    """Automatic restarts stopped (``reason``); a reload revives the extension."""


class NotDeclared(ServeError):
    """The extension does not declare the tool, command, hook or feature called."""


class RemoteError(ServeError):
    """The extension answered with a JSON-RPC error (``rpc_code``, ``data``)."""


class Cancelled(ServeError):
    """The call was cancelled (``reason``: ``user``, ``shutdown``, ``dropped``)."""


class DeadlineExceeded(ServeError):
    """The call's deadline passed (``after_ms``)."""


class TransportLost(ServeError):
    """The extension's process ended or its pipes broke during the call."""


class InvalidResult(ServeError):
    """An answer broke the result rules (``path`` names the member)."""


class Declined(ServeError):
    """A destructive menu action was not confirmed; nothing was sent."""


class RefusedResponse(ServeError):
    """The extension answered in a frame serve refuses."""


class RequestTooLarge(ServeError):
    """The request exceeds the frame bound (``bytes``, ``limit``)."""


class Overloaded(ServeError):
    """The extension's queue is full (``queued``)."""


class InvalidRequest(ServeError):
    """The request could not be encoded for the extension."""


class ResourceRefused(ServeError):
    """A resource input was refused (``path``, ``resource_error``); nothing was sent."""


class HostShutDown(ServeError):
    """serve is shutting down."""


class NotificationRefused(ServeError):
    """A notification broke a rule (``refusal``); nothing was sent."""


class ReportRefused(ServeError):
    """An ``agent_report`` or ``agent_event`` was refused; nothing was recorded."""


class DiscoveryRefused(ServeError):
    """``get_applicable_operations`` was refused (``reason``)."""


#: The classes the schema's error table names, by name.
_CLASSES: Dict[str, Type[ServeError]] = {
    cls.__name__: cls
    for cls in (
        ControlLineError,
        UnknownCallId,
        UnknownRequestId,
        StartError,
        NotStarted,
        NotReady,
        Parked,
        NotDeclared,
        RemoteError,
        Cancelled,
        DeadlineExceeded,
        TransportLost,
        InvalidResult,
        Declined,
        RefusedResponse,
        RequestTooLarge,
        Overloaded,
        InvalidRequest,
        ResourceRefused,
        HostShutDown,
        NotificationRefused,
        ReportRefused,
        DiscoveryRefused,
    )
}


#: serve's error codes and the exception each raises (docs/serve-protocol.md), from
#: the schema's ``$defs.error_codes`` (``_error_codes.py`` is generated from it).
ERROR_CLASSES: Dict[str, Type[ServeError]] = {
    code: _CLASSES[name] for code, name in ERROR_CODES.items()
}


def error_for(error: Mapping[str, Any], *, starting: bool = False) -> ServeError:
    """The exception for serve's error object ``error``.

    With ``starting`` (a ``start`` or ``reload`` reply) every code raises
    :class:`StartError`, ``transport_lost`` and ``not_started`` included, so one
    ``except StartError`` covers a start that failed for any reason.
    """
    if starting:
        return StartError(error)
    cls = ERROR_CLASSES.get(str(error.get("code", "")), ServeError)
    return cls(error)


class Refusal(Exception):
    """Raised by a service handler to refuse a request with one of the reference's
    contract names.

    ``code`` is ``unsupported_feature``, ``invalid_request``, ``bounds_exceeded``,
    ``not_foreground_owner``, ``resource_exhausted`` or ``unavailable``; the extension
    receives ``"<code>: <message>"``. A handler that raises anything else is answered
    ``unavailable`` with the exception's type and text.
    """

    CODES = (
        "unsupported_feature",
        "invalid_request",
        "bounds_exceeded",
        "not_foreground_owner",
        "resource_exhausted",
        "unavailable",
    )

    def __init__(self, code: str, message: str = "") -> None:
        if code not in self.CODES:
            raise ValueError(f"a refusal is one of {', '.join(self.CODES)}, not {code!r}")
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}" if message else code)
