"""The asyncio API: :class:`Host` is :class:`octet_host.Host` for asyncio programs.

It shares the protocol core (the reader thread, the routing, the worker pool) with the
synchronous API; each operation awaits the core's answer through the running loop,
so no call blocks the loop. Service handlers and question callbacks may be plain
functions (run on the worker pool) or coroutine functions (run on this loop).
"""

from __future__ import annotations

import asyncio
from typing import (
    Any,
    AsyncIterator,
    Awaitable,
    Callable,
    Optional,
    Sequence,
    TypeVar,
    Union,
    cast,
)

from . import _ops
from ._core import Line, Subscriber
from ._events import Event
from ._future import Future
from ._generated import (
    StartReply,
)
from ._operations import AsyncOperations
from ._ops import Id, Json, Services
from ._session import Session
from .errors import HostLost

T = TypeVar("T")
Question = Callable[[Json], Union[Any, Awaitable[Any]]]


def _awaitable(future: "Future[T]", loop: asyncio.AbstractEventLoop) -> "asyncio.Future[T]":
    """An asyncio future of the core's future, resolved on ``loop``."""
    waiter: "asyncio.Future[T]" = loop.create_future()

    def settle(done: "Future[T]") -> None:
        def apply() -> None:
            if waiter.cancelled():
                return
            error = done.exception()
            if error is not None:
                waiter.set_exception(error)
            else:
                waiter.set_result(done.result())

        try:
            loop.call_soon_threadsafe(apply)
        except RuntimeError:  # the loop closed meanwhile
            pass

    future.add_done_callback(settle)
    return waiter


class PendingCall:
    """A call in flight: ``await pending.result()``, ``await pending.cancel()``."""

    def __init__(
        self, host: "Host", request: "_ops.Request[Json]", call_id: Id, future: "Future[Line]"
    ) -> None:
        self._host = host
        self._request = request
        self.call_id = call_id
        self._future = future

    def done(self) -> bool:
        """True once the call settled."""
        return self._future.done()

    async def result(self) -> Json:
        """The call's output, or its error raised.

        Cancelling the awaiting task (``task.cancel()``, or ``asyncio.wait_for`` running
        out) cancels the call on serve: the extension receives ``$/cancelRequest``.
        """
        try:
            line = await _awaitable(self._future, self._host._loop)
        except asyncio.CancelledError:
            self._abandon()
            raise
        return _ops.outcome(self._request, line)

    def _abandon(self) -> None:
        """The awaiting task was cancelled: the call is cancelled too, without waiting
        for serve's reply (the task is already gone)."""
        if self._future.done():
            return
        try:
            _ops.send(self._host._core, _ops.cancel(self.call_id))
        except Exception:  # serve is gone: nothing runs any more
            pass

    async def cancel(self) -> None:
        """Sends ``cancel``; the result then tells how the call ended."""
        if self._future.done():
            return
        try:
            await self._host._do(_ops.cancel(self.call_id))
        except Exception:
            if not self._future.done():
                raise


class Host(Session, AsyncOperations):
    """``octet-host serve`` for asyncio: ``async with Host(workspace, ...) as host``.

    Takes the options of :class:`octet_host.Host` (:class:`octet_host.Session`);
    serve starts when the block is entered, on a worker thread, so the loop keeps
    running. Subscribers are called on the client's event thread: use
    ``loop.call_soon_threadsafe`` in one to reach the loop.
    """

    _OPEN_AT_ONCE = False
    _loop_or_none: Optional[asyncio.AbstractEventLoop] = None

    @property
    def _loop(self) -> asyncio.AbstractEventLoop:
        if self._loop_or_none is None:
            raise RuntimeError("enter `async with octet_host.aio.Host(...)` first")
        return self._loop_or_none

    async def __aenter__(self) -> "Host":
        self._loop_or_none = asyncio.get_running_loop()
        core = await self._loop.run_in_executor(None, self._open)
        core.desk.loop = self._loop
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> Optional[Json]:
        """The ordered shutdown (idempotent); the shutdown report or None."""
        core = self._opened
        if core is not None and self.report is None and not core.closing:
            line = await self._loop.run_in_executor(None, core.close, self._shutdown_timeout)
            return self._closed(line)
        return self.report

    async def _do(self, request: "_ops.Request[T]") -> T:
        _, future = _ops.send(self._core, request)
        return _ops.outcome(request, await _awaitable(future, self._loop))

    async def _call(self, request: "_ops.Request[Json]") -> Json:
        sent_id, future = _ops.send(self._core, request)
        assert sent_id is not None
        return await PendingCall(self, request, sent_id, future).result()

    # Events.

    async def events(self, timeout: Optional[float] = None) -> AsyncIterator[Event]:
        """The buffered events, then new ones; ends after ``timeout`` seconds without
        one (None: when serve is gone). It waits on the loop, holding no thread."""
        core, loop = self._core, self._loop
        arrived = asyncio.Event()

        def wake() -> None:
            loop.call_soon_threadsafe(arrived.set)

        stop = core.listen(wake)
        try:
            while True:
                arrived.clear()
                event = core.next_event(0)
                if event is not None:
                    yield cast(Event, event)
                    continue
                if core.finished():
                    return
                try:
                    await asyncio.wait_for(arrived.wait(), timeout)
                except asyncio.TimeoutError:
                    return
        finally:
            stop()

    # Operations written by hand: the session's start, reload and end, and submit.

    async def start(
        self,
        extension: str,
        *,
        services: Services = None,
        features: Optional[Sequence[str]] = None,
        startup_timeout: Optional[float] = None,
        bulk_storage: Optional[str] = None,
    ) -> StartReply:
        """Starts ``extension`` with ``services`` bound (see :meth:`octet_host.Host.start`)."""
        return await self._do(
            _ops.start(extension, services, features, startup_timeout, bulk_storage)
        )

    async def reload(self, extension: str) -> StartReply:
        """Starts a new generation candidate-first."""
        return await self._do(_ops.reload(extension))

    # Calls.

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
        """Sends any call without waiting (see :meth:`octet_host.Host.submit`)."""
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

    async def shutdown(self) -> Json:
        """Ends the session now (as :meth:`close` does); the report."""
        report = await self.close()
        if report is None:
            raise self._core.lost or HostLost("serve ended without a shutdown report")
        return report

    # Every other operation is a method of the generated ``AsyncOperations``.
