"""What ``events()`` yields: serve's event lines, the lines the client turns into
events, and the client's own events."""

from __future__ import annotations

from typing import Any, Dict, Literal, Optional, TypedDict, Union

from ._generated import (
    ConfirmationRequestEvent,
    EventLine,
    InputRequestEvent,
    RequestCancelledEvent,
    ShutdownEvent,
    TraceEvent,
)


class _ClientEventRequired(TypedDict):
    type: Literal["event"]
    event: Literal[
        "host_lost",
        "protocol_error",
        "callback_error",
        "handler_error",
        "answer_refused",
        "unmatched_result",
    ]


class ClientEvent(_ClientEventRequired, total=False):
    """An event of the client itself, not a line of serve's:

    - ``host_lost``: serve ended without its shutdown line (``message``,
      ``exit_status``);
    - ``protocol_error``: serve wrote a line the client cannot read (``message``);
    - ``callback_error``: a subscriber raised (``message``, and ``of``, the event it
      was given);
    - ``handler_error``: a service handler or a question callback raised (``method``,
      ``request_id``, ``extension``, ``message``); the request was answered
      ``unavailable`` (a question: denied);
    - ``answer_refused``: serve refused a handler's answer (``request_id``, ``method``,
      ``extension``, ``error``);
    - ``unmatched_result``: a ``result`` line no call waits for (the line's members).
    """

    message: str
    exit_status: Optional[int]
    of: str
    method: str
    request_id: int
    extension: str
    error: Optional[Dict[str, Any]]
    call_id: Union[str, int]


#: One event: narrow it by its ``event`` member (``if e["event"] == "trace": ...``).
Event = Union[
    EventLine,
    TraceEvent,
    ConfirmationRequestEvent,
    InputRequestEvent,
    RequestCancelledEvent,
    ShutdownEvent,
    ClientEvent,
]
