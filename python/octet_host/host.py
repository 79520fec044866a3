"""The synchronous API: :class:`Host` runs ``octet-host serve`` and makes every serve
operation a method."""

from __future__ import annotations

from typing import (
    Any,
    Iterator,
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


class Host(Session):
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

    # Events.

    def events(self, timeout: Optional[float] = None) -> Iterator[Json]:
        """The buffered events in order, then new ones as they come; ends after
        ``timeout`` seconds without one (None: when serve is gone)."""
        while True:
            event = self._core.next_event(timeout)
            if event is None:
                return
            yield event

    # Operations: the session.

    def discover(self) -> DiscoverReply:
        """The extensions found (``entries``) and rejected manifests (``diagnostics``)."""
        return self._do(_ops.discover())

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

    def stop(self, extension: str) -> Json:
        """Stops ``extension`` in order; its shutdown report."""
        return self._do(_ops.stop(extension))

    def reload(self, extension: str) -> StartReply:
        """Starts a new generation candidate-first; like :meth:`start`'s reply."""
        return self._do(_ops.reload(extension))

    def artifact(self, extension: str, artifact_id: str) -> ArtifactReply:
        """An artifact a live generation of ``extension`` published: its ``mime_type``,
        ``size``, ``sha256`` and ``data`` (the bytes, base64)."""
        return self._do(_ops.artifact(extension, artifact_id))

    def status(self) -> List[StatusEntry]:
        """One entry per live generation."""
        return self._do(_ops.status())

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
        ``status_collect``, ``render``, ``menu``, ``menu_action``) without waiting."""
        request = _ops.call(
            op, extension, timeout=timeout, call_id=call_id, progress=progress, **members
        )
        sent_id, future = _ops.send(self._core, request)
        assert sent_id is not None
        return PendingCall(self, request, sent_id, future)

    def call(
        self,
        extension: str,
        tool: str,
        arguments: Optional[Json] = None,
        *,
        timeout: Optional[float] = None,
        progress: Optional[Subscriber] = None,
    ) -> ToolOutput:
        """Calls a tool: ``{content, is_error, structured_content, metadata}``."""
        pending = self.submit(
            "call",
            extension,
            tool=tool,
            arguments=arguments or {},
            timeout=timeout,
            progress=progress,
        )
        return cast(ToolOutput, pending.result())

    def command(
        self,
        extension: str,
        name: str,
        arguments: Sequence[str] = (),
        *,
        timeout: Optional[float] = None,
    ) -> CommandOutput:
        """Runs a command: ``{text, notifications, context}``."""
        pending = self.submit(
            "command", extension, name=name, arguments=list(arguments), timeout=timeout
        )
        return cast(CommandOutput, pending.result())

    def hook(
        self,
        extension: str,
        hook: str,
        payload: Optional[Json] = None,
        *,
        timeout: Optional[float] = None,
    ) -> HookOutput:
        """Runs a hook: ``{hook, disposition, effective_disposition, ...}``."""
        pending = self.submit("hook", extension, hook=hook, payload=payload or {}, timeout=timeout)
        return cast(HookOutput, pending.result())

    def context(
        self, extension: str, prompt: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> ContextOutput:
        """Collects context: ``{contributions}``."""
        pending = self.submit("context", extension, prompt=prompt, timeout=timeout)
        return cast(ContextOutput, pending.result())

    def status_collect(
        self, extension: str, surface: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> StatusOutput:
        """Collects a status surface: ``{contribution}``."""
        pending = self.submit("status_collect", extension, surface=surface, timeout=timeout)
        return cast(StatusOutput, pending.result())

    def render(
        self,
        extension: str,
        tool: str,
        output: str,
        *,
        arguments: Optional[Json] = None,
        is_error: bool = False,
        timeout: Optional[float] = None,
    ) -> RenderOutput:
        """Renders a tool's output: ``{segments}``."""
        pending = self.submit(
            "render",
            extension,
            tool=tool,
            arguments=arguments or {},
            output=output,
            is_error=is_error,
            timeout=timeout,
        )
        return cast(RenderOutput, pending.result())

    def menu(self, extension: str, *, timeout: Optional[float] = None) -> MenuOutput:
        """Collects the menu: ``{menu, fallback_reason}``."""
        pending = self.submit("menu", extension, timeout=timeout)
        return cast(MenuOutput, pending.result())

    def menu_action(
        self, extension: str, item: Json, *, timeout: Optional[float] = None
    ) -> MenuActionOutput:
        """Runs a menu action as :meth:`menu` showed it; like :meth:`command`."""
        pending = self.submit("menu_action", extension, item=item, timeout=timeout)
        return cast(MenuActionOutput, pending.result())

    def cancel(self, call_id: Id) -> None:
        """Cancels the active call ``call_id``."""
        self._do(_ops.cancel(call_id))

    # Operations: answers (the callbacks and bound services send these themselves).

    def answer_confirmation(self, request_id: int, confirmed: bool) -> None:
        """Answers a ``confirmation_request``."""
        self._do(_ops.answer_confirmation(request_id, confirmed))

    def answer_input(self, request_id: int, value: Optional[str]) -> None:
        """Answers an ``input_request`` (None cancels it)."""
        self._do(_ops.answer_input(request_id, value))

    def service_answer(
        self,
        request_id: int,
        *,
        result: Optional[Json] = None,
        refusal: Optional[str] = None,
        message: Optional[str] = None,
    ) -> None:
        """Answers a ``service_request`` by hand."""
        self._do(_ops.service_answer(request_id, result, refusal, message))

    # Operations: notifications to extensions.

    def notify(
        self,
        extension: str,
        method: str,
        params: Optional[Json] = None,
        *,
        generation: Optional[int] = None,
    ) -> None:
        """``shortcut/trigger``, ``ui/terminal-input`` or ``ui/resize``."""
        self._do(_ops.notify(extension, method, params, generation))

    def message_delta(
        self,
        extension: str,
        message_id: str,
        deltas: Union[str, Sequence[str]],
        *,
        generation: Optional[int] = None,
    ) -> None:
        """Adds assistant-message text (one delta, or several taken whole)."""
        self._do(_ops.message_delta(extension, message_id, deltas, generation))

    def message_settled(
        self, extension: str, message_id: str, *, generation: Optional[int] = None
    ) -> None:
        """Sends the message's pending deltas at once."""
        self._do(_ops.message_settled(extension, message_id, generation))

    def terminal_revoke(
        self, extension: str, reason: str, *, generation: Optional[int] = None
    ) -> None:
        """Takes the terminal grant back from its holder."""
        self._do(_ops.terminal_revoke(extension, reason, generation))

    def autocomplete(
        self, text: str, cursor: int, revision: int, *, extension: Optional[str] = None
    ) -> AutocompleteReply:
        """Asks the admitted chains: ``{claimed_by, prefix, items, failures}``."""
        return self._do(_ops.autocomplete(text, cursor, revision, extension))

    def lifecycle(self, event: str, **params: Any) -> None:
        """Sends a lifecycle notification (``session/started``, ``turn/settled``, ...)."""
        self._do(_ops.lifecycle(event, params))

    # Operations: child agent sessions and resources.

    def agent_report(self, report: Json) -> None:
        """Reports one change of a child agent session."""
        self._do(_ops.agent_report(report))

    def agent_event(self, agent_id: str, event: Json) -> int:
        """Records one observation of a child; its sequence number."""
        return self._do(_ops.agent_event(agent_id, event))

    def get_applicable_operations(self, arguments: Json) -> GetApplicableOperationsReply:
        """Runs the host tool ``get_applicable_operations``."""
        return self._do(_ops.get_applicable_operations(arguments))
