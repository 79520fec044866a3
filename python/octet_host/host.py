"""The synchronous API: :class:`Host` runs ``octet-host serve`` and makes every serve
operation a method."""

from __future__ import annotations

from typing import (
    Any,
    Iterator,
    Optional,
    Sequence,
    TypeVar,
    cast,
)

from . import _ops
from ._core import Line, Subscriber
from ._events import Event
from ._future import Future
from ._generated import (
    StartReply,
)
from ._operations import Operations
from ._ops import Id, Json, Services
from ._session import Session
from .errors import HostLost

T = TypeVar("T")


class PendingCall:
    """A call in flight: :meth:`result` waits for it, :meth:`cancel` cancels it."""

    def __init__(
        self, host: "Host", request: "_ops.Request[Json]", call_id: Id, future: "Future[Line]"
    ) -> None:
        self._host = host
        self._request = request
        self.call_id = call_id
        self._future = future

    def result(self, timeout: Optional[float] = None) -> Json:
        """The call's output, or its error raised. ``timeout`` (seconds) bounds only this
        wait (``TimeoutError``); the call's own deadline is its ``timeout``."""
        if timeout is None and not self._host._core.orders(self._request.progress):
            # Read serve's output on this thread while waiting (one wake-up a call);
            # a call with a progress callback settles on the event thread instead.
            self._host._core.wait(self._future)
        return _ops.outcome(self._request, self._future.result(timeout))

    def done(self) -> bool:
        """True once the call settled."""
        return self._future.done()

    def cancel(self) -> None:
        """Sends ``cancel``; the result then tells how the call ended (usually
        :class:`~octet_host.errors.Cancelled`; it may have settled first)."""
        if self._future.done():
            return
        try:
            self._host._do(_ops.cancel(self.call_id))
        except Exception:
            if not self._future.done():
                raise


class Host(Session, Operations):
    """``octet-host serve`` as a context manager (the options: :class:`Session`).

    ``Host(workspace, extension_dirs=[...])`` starts serve (the binary is
    ``OCTET_HOST_BIN``, else the package's own, else PATH), reads its ``ready`` line and
    refuses a serve protocol it does not know. Leaving the ``with`` block (or
    :meth:`close`) runs the ordered shutdown and kills serve by pid if it does not end.

    Questions from extensions go to ``on_confirmation(line) -> bool`` and
    ``on_input(line) -> str | None`` (by default denied and cancelled); service
    requests to the objects bound by :meth:`start`. Both run on a pool of ``workers``
    threads, never on the reader. Events are kept in a buffer of ``event_buffer``
    (:meth:`events`) and passed to subscribers (:meth:`subscribe`) in order.
    """

    def __enter__(self) -> "Host":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> Optional[Json]:
        """The ordered shutdown (idempotent): the shutdown report, or None when serve was
        already gone or had to be killed."""
        if self.report is None and not self._core.closing:
            return self._closed(self._core.close(self._shutdown_timeout))
        return self.report

    def _do(self, request: "_ops.Request[T]") -> T:
        _, future = _ops.send(self._core, request)
        self._core.wait(future)
        return _ops.outcome(request, future.result())

    def _call(self, request: "_ops.Request[Json]") -> Json:
        sent_id, future = _ops.send(self._core, request)
        assert sent_id is not None
        return PendingCall(self, request, sent_id, future).result()

    # Events.

    def events(self, timeout: Optional[float] = None) -> Iterator[Event]:
        """The buffered events in order, then new ones as they come; ends after
        ``timeout`` seconds without one (None: when serve is gone)."""
        while True:
            event = self._core.next_event(timeout)
            if event is None:
                return
            yield cast(Event, event)

    # Operations written by hand: the session's start, reload and end, and submit.

    def start(
        self,
        extension: str,
        *,
        services: Services = None,
        features: Optional[Sequence[str]] = None,
        startup_timeout: Optional[float] = None,
        bulk_storage: Optional[str] = None,
    ) -> StartReply:
        """Starts ``extension``; raises :class:`~octet_host.errors.StartError`.

        ``services`` maps each service kind to the object that serves it
        (``{"composer": MyComposer()}``; a name with ``None``, or a list of names, binds
        a frontend feature such as ``terminal_input`` with no object)."""
        return self._do(_ops.start(extension, services, features, startup_timeout, bulk_storage))

    def reload(self, extension: str) -> StartReply:
        """Starts a new generation candidate-first; like :meth:`start`'s reply."""
        return self._do(_ops.reload(extension))

    def shutdown(self) -> Json:
        """Ends the session now (as :meth:`close` does); the report."""
        report = self.close()
        if report is None:
            raise self._core.lost or HostLost("serve ended without a shutdown report")
        return report

    # Operations: calls.

    def submit(
        self,
        op: str,
        extension: str,
        *,
        timeout: Optional[float] = None,
        call_id: Optional[Id] = None,
        progress: Optional[Subscriber] = None,
        **members: Any,
    ) -> PendingCall:
        """Sends any call (``call``, ``command``, ``hook``, ``context``,
        ``status_collect``, ``render``, ``menu``, ``menu_action``) without waiting; its
        ``members`` are the call's own (``tool=``, ``arguments=``, ...)."""
        request = _ops.call(
            op,
            extension,
            call_id=call_id,
            progress=progress,
            timeout_ms=_ops.milliseconds(timeout),
            **members,
        )
        sent_id, future = _ops.send(self._core, request)
        assert sent_id is not None
        return PendingCall(self, request, sent_id, future)

    # Every other operation is a method of the generated ``Operations``.
