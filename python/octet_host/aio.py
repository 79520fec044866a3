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
    List,
    Optional,
    Sequence,
    TypeVar,
    Union,
    cast,
)

from . import _ops
from ._core import Line, Subscriber
from ._future import Future
from ._generated import (
    ArtifactReply,
    AutocompleteReply,
    CommandOutput,
    ContextOutput,
    DiscoverReply,
    GetApplicableOperationsReply,
    HookOutput,
    MenuActionOutput,
    MenuOutput,
    RenderOutput,
    StartReply,
    StatusEntry,
    StatusOutput,
    ToolOutput,
)
from ._ops import Id, Json, Services
from ._session import Session

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


class Host(Session):
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

    # Events.

    async def events(self, timeout: Optional[float] = None) -> AsyncIterator[Json]:
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
                    yield event
                    continue
                if core.finished():
                    return
                try:
                    await asyncio.wait_for(arrived.wait(), timeout)
                except asyncio.TimeoutError:
                    return
        finally:
            stop()

    # The session.

    async def discover(self) -> DiscoverReply:
        """The extensions found and the rejected manifests."""
        return await self._do(_ops.discover())

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

    async def stop(self, extension: str) -> Json:
        """Stops ``extension``; its shutdown report."""
        return await self._do(_ops.stop(extension))

    async def reload(self, extension: str) -> StartReply:
        """Starts a new generation candidate-first."""
        return await self._do(_ops.reload(extension))

    async def artifact(self, extension: str, artifact_id: str) -> ArtifactReply:
        """An artifact a live generation of ``extension`` published: its ``mime_type``,
        ``size``, ``sha256`` and ``data`` (the bytes, base64)."""
        return await self._do(_ops.artifact(extension, artifact_id))

    async def status(self) -> List[StatusEntry]:
        """One entry per live generation."""
        return await self._do(_ops.status())

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
            op, extension, timeout=timeout, call_id=call_id, progress=progress, **members
        )
        sent_id, future = _ops.send(self._core, request)
        assert sent_id is not None
        return PendingCall(self, request, sent_id, future)

    async def call(
        self,
        extension: str,
        tool: str,
        arguments: Optional[Json] = None,
        *,
        timeout: Optional[float] = None,
        progress: Optional[Subscriber] = None,
    ) -> ToolOutput:
        """Calls a tool; its output."""
        pending = self.submit(
            "call",
            extension,
            tool=tool,
            arguments=arguments or {},
            timeout=timeout,
            progress=progress,
        )
        return cast(ToolOutput, await pending.result())

    async def command(
        self,
        extension: str,
        name: str,
        arguments: Sequence[str] = (),
        *,
        timeout: Optional[float] = None,
    ) -> CommandOutput:
        """Runs a command."""
        pending = self.submit(
            "command", extension, name=name, arguments=list(arguments), timeout=timeout
        )
        return cast(CommandOutput, await pending.result())

    async def hook(
        self,
        extension: str,
        hook: str,
        payload: Optional[Json] = None,
        *,
        timeout: Optional[float] = None,
    ) -> HookOutput:
        """Runs a hook."""
        pending = self.submit("hook", extension, hook=hook, payload=payload or {}, timeout=timeout)
        return cast(HookOutput, await pending.result())

    async def context(
        self, extension: str, prompt: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> ContextOutput:
        """Collects context."""
        pending = self.submit("context", extension, prompt=prompt, timeout=timeout)
        return cast(ContextOutput, await pending.result())

    async def status_collect(
        self, extension: str, surface: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> StatusOutput:
        """Collects a status surface."""
        pending = self.submit("status_collect", extension, surface=surface, timeout=timeout)
        return cast(StatusOutput, await pending.result())

    async def render(
        self,
        extension: str,
        tool: str,
        output: str,
        *,
        arguments: Optional[Json] = None,
        is_error: bool = False,
        timeout: Optional[float] = None,
    ) -> RenderOutput:
        """Renders a tool's output."""
        pending = self.submit(
            "render",
            extension,
            tool=tool,
            arguments=arguments or {},
            output=output,
            is_error=is_error,
            timeout=timeout,
        )
        return cast(RenderOutput, await pending.result())

    async def menu(self, extension: str, *, timeout: Optional[float] = None) -> MenuOutput:
        """Collects the menu."""
        pending = self.submit("menu", extension, timeout=timeout)
        return cast(MenuOutput, await pending.result())

    async def menu_action(
        self, extension: str, item: Json, *, timeout: Optional[float] = None
    ) -> MenuActionOutput:
        """Runs a menu action."""
        pending = self.submit("menu_action", extension, item=item, timeout=timeout)
        return cast(MenuActionOutput, await pending.result())

    async def cancel(self, call_id: Id) -> None:
        """Cancels the active call ``call_id``."""
        await self._do(_ops.cancel(call_id))

    # Answers.

    async def answer_confirmation(self, request_id: int, confirmed: bool) -> None:
        """Answers a ``confirmation_request``."""
        await self._do(_ops.answer_confirmation(request_id, confirmed))

    async def answer_input(self, request_id: int, value: Optional[str]) -> None:
        """Answers an ``input_request``."""
        await self._do(_ops.answer_input(request_id, value))

    async def service_answer(
        self,
        request_id: int,
        *,
        result: Optional[Json] = None,
        refusal: Optional[str] = None,
        message: Optional[str] = None,
    ) -> None:
        """Answers a ``service_request`` by hand."""
        await self._do(_ops.service_answer(request_id, result, refusal, message))

    # Notifications to extensions.

    async def notify(
        self,
        extension: str,
        method: str,
        params: Optional[Json] = None,
        *,
        generation: Optional[int] = None,
    ) -> None:
        """``shortcut/trigger``, ``ui/terminal-input`` or ``ui/resize``."""
        await self._do(_ops.notify(extension, method, params, generation))

    async def message_delta(
        self,
        extension: str,
        message_id: str,
        deltas: Union[str, Sequence[str]],
        *,
        generation: Optional[int] = None,
    ) -> None:
        """Adds assistant-message text."""
        await self._do(_ops.message_delta(extension, message_id, deltas, generation))

    async def message_settled(
        self, extension: str, message_id: str, *, generation: Optional[int] = None
    ) -> None:
        """Sends the message's pending deltas at once."""
        await self._do(_ops.message_settled(extension, message_id, generation))

    async def terminal_revoke(
        self, extension: str, reason: str, *, generation: Optional[int] = None
    ) -> None:
        """Takes the terminal grant back."""
        await self._do(_ops.terminal_revoke(extension, reason, generation))

    async def autocomplete(
        self, text: str, cursor: int, revision: int, *, extension: Optional[str] = None
    ) -> AutocompleteReply:
        """Asks the admitted autocomplete chains."""
        return await self._do(_ops.autocomplete(text, cursor, revision, extension))

    async def lifecycle(self, event: str, **params: Any) -> None:
        """Sends a lifecycle notification."""
        await self._do(_ops.lifecycle(event, params))

    # Child agent sessions and resources.

    async def agent_report(self, report: Json) -> None:
        """Reports one change of a child agent session."""
        await self._do(_ops.agent_report(report))

    async def agent_event(self, agent_id: str, event: Json) -> int:
        """Records one observation of a child; its sequence number."""
        return await self._do(_ops.agent_event(agent_id, event))

    async def get_applicable_operations(self, arguments: Json) -> GetApplicableOperationsReply:
        """Runs the host tool ``get_applicable_operations``."""
        return await self._do(_ops.get_applicable_operations(arguments))

    async def shutdown(self) -> Json:
        """Ends the session now; the report."""
        report = await self.close()
        if report is None:
            raise self._core.lost or RuntimeError("serve ended without a shutdown report")
        return report
