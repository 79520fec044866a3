"""The desk: where questions and ``service_request`` lines are answered.

Each request is served on a bounded pool of worker threads (never the thread that
reads serve's output) by the object a ``start`` bound for its kind, or by the question
callbacks. A handler that returns sends the result; one that raises :class:`Refusal`
sends that refusal; one that raises anything else is answered ``unavailable`` and
reported as a ``handler_error`` event; one that hangs holds one worker until it
returns, and its answer is not sent once serve withdrew the request.
"""

from __future__ import annotations

import asyncio
import inspect
import queue
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ._call import ServiceCall
from ._future import Future
from ._generated import SERVICE_KINDS
from .errors import HostLost, Refusal

Line = Dict[str, Any]
_STOP = object()


class _Binding:
    """The services a `start` bound for one extension."""

    def __init__(self, services: Mapping[str, Any]) -> None:
        self.services = dict(services)
        self.api_version: Optional[str] = None

    def route(
        self, kind: str, method: str, params: Mapping[str, Any]
    ) -> Optional[Tuple[Any, str, bool]]:
        """The object bound for the line's ``kind``, the name of its method that serves
        ``method``, and whether the row is a notification."""
        obj = self.services.get(kind)
        if obj is None or kind not in SERVICE_KINDS:
            return None
        rows = [row for row in SERVICE_KINDS[kind][1] if row[0] == method]
        # A row told apart by a params member (the private lane's `session_leaf`) takes
        # the request when that member is there; the plain row otherwise.
        marked = [row for row in rows if row[4] is not None and row[4] in params]
        plain = [row for row in rows if row[4] is None]
        found = marked or plain
        if not found:
            return None
        if self.api_version is not None:
            for _, fn, apis, notification, _ in found:
                if self.api_version in apis:
                    return obj, fn, notification
        _, fn, _, notification, _ = found[0]
        return obj, fn, notification


class _Pool:
    """A bounded pool of daemon worker threads (a handler that hangs holds one worker
    and never blocks the interpreter's exit)."""

    def __init__(self, workers: int) -> None:
        self._jobs: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self._limit = max(1, workers)
        self._threads: List[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            if self._idle == 0 and len(self._threads) < self._limit:
                thread = threading.Thread(target=self._run, name="octet-host-worker", daemon=True)
                self._threads.append(thread)
                thread.start()
        self._jobs.put(job)

    def _run(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            job = self._jobs.get()
            with self._lock:
                self._idle -= 1
            if job is _STOP:
                return
            try:
                job()
            except Exception:  # a job reports its own faults; the worker lives on
                pass

    def close(self) -> None:
        for _ in self._threads:
            self._jobs.put(_STOP)


class Desk:
    """The open questions and service requests, and the services that answer them."""

    def __init__(
        self,
        request: Callable[[Dict[str, Any]], "Future[Line]"],
        emit: Callable[[Line], None],
        workers: int,
        *,
        on_confirmation: Optional[Callable[[Line], Any]],
        on_input: Optional[Callable[[Line], Any]],
    ) -> None:
        self._request = request
        self._emit = emit
        self._pool = _Pool(workers)
        self._on_confirmation = on_confirmation
        self._on_input = on_input
        self._lock = threading.Lock()
        self._open: Dict[int, ServiceCall] = {}
        self._bindings: Dict[str, _Binding] = {}
        #: The asyncio loop that runs coroutine handlers (set by ``octet_host.aio``).
        self.loop: Any = None

    def bind(self, extension: str, services: Mapping[str, Any]) -> None:
        """The services a ``start`` of ``extension`` binds."""
        with self._lock:
            self._bindings[extension] = _Binding(services)

    def set_api_version(self, extension: str, api_version: Optional[str]) -> None:
        """What ``extension`` negotiated (it picks between rows that share a method)."""
        with self._lock:
            binding = self._bindings.get(extension)
            if binding is not None:
                binding.api_version = api_version

    def serve(self, line: Line) -> None:
        """A ``service_request`` line: served on the pool."""
        call = self._opened(ServiceCall(line))
        self._pool.submit(lambda: self._serve(call, line))

    def ask(self, line: Line) -> None:
        """A ``confirmation_request`` or ``input_request`` line: asked on the pool."""
        call = self._opened(ServiceCall({**line, "method": line["type"]}))
        self._pool.submit(lambda: self._question(call, line))

    def withdraw(self, request_id: Any, reason: Optional[str]) -> None:
        """serve no longer wants the answer to ``request_id``."""
        with self._lock:
            call = self._open.pop(request_id, None)
        if call is not None:
            call.withdrawn_reason = reason
            call.withdrawn.set()

    def withdraw_all(self, reason: str) -> None:
        """Withdraws every open request (serve is gone)."""
        with self._lock:
            calls, self._open = self._open, {}
        for call in calls.values():
            call.withdrawn_reason = reason
            call.withdrawn.set()

    def close(self) -> None:
        """Lets the idle workers end."""
        self._pool.close()

    def _opened(self, call: ServiceCall) -> ServiceCall:
        with self._lock:
            self._open[call.request_id] = call
        return call

    def _answer(self, call: ServiceCall, line: Dict[str, Any]) -> None:
        with self._lock:
            open_ = self._open.pop(call.request_id, None) is not None
        if not open_ or call.is_withdrawn():
            return
        try:
            reply = self._request(line)
        except HostLost:
            return

        def check(done: "Future[Line]") -> None:
            try:
                answer = done.result()
            except Exception:
                return
            if not answer.get("ok"):
                self._emit(
                    {
                        "type": "event",
                        "event": "answer_refused",
                        "request_id": call.request_id,
                        "method": call.method,
                        "extension": call.extension,
                        "error": answer.get("error"),
                    }
                )

        reply.add_done_callback(check)

    def _run_handler(self, handler: Callable[..., Any], *args: Any) -> Any:
        result = handler(*args)
        if inspect.isawaitable(result):
            if self.loop is None:
                raise TypeError("a coroutine handler needs octet_host.aio.Host")
            result = asyncio.run_coroutine_threadsafe(result, self.loop).result()  # type: ignore[arg-type]
        return result

    def _serve(self, call: ServiceCall, line: Line) -> None:
        if call.is_withdrawn():
            return  # withdrawn while it waited for a worker: nothing to serve
        params = line.get("params") or {}
        with self._lock:
            binding = self._bindings.get(call.extension)
        kind = line.get("kind", "")
        route = binding.route(kind, call.method, params) if binding is not None else None
        if route is None:
            self._answer(
                call,
                {
                    "op": "service_answer",
                    "request_id": call.request_id,
                    "refusal": "unsupported_feature",
                    "message": f"this client binds no {kind} service for {call.method}",
                },
            )
            return
        obj, fn, notification = route
        handler = getattr(obj, fn, None)
        try:
            if handler is None:
                raise Refusal("unsupported_feature", f"{call.method} is not served")
            result = self._run_handler(handler, params, call)
        except Refusal as refusal:
            answer: Dict[str, Any] = {"refusal": refusal.code, "message": refusal.message}
        except Exception as error:
            self._emit(
                {
                    "type": "event",
                    "event": "handler_error",
                    "extension": call.extension,
                    "method": call.method,
                    "request_id": call.request_id,
                    "message": f"{type(error).__name__}: {error}",
                }
            )
            answer = {
                "refusal": "unavailable",
                "message": f"the client's handler raised {type(error).__name__}",
            }
        else:
            answer = {"result": {} if result is None else result}
        if notification:
            with self._lock:
                self._open.pop(call.request_id, None)
            return
        self._answer(call, {"op": "service_answer", "request_id": call.request_id, **answer})

    def _question(self, call: ServiceCall, line: Line) -> None:
        if call.is_withdrawn():
            return
        confirmation = line["type"] == "confirmation_request"
        callback: Optional[Callable[[Line], Any]] = (
            self._on_confirmation if confirmation else self._on_input
        )
        try:
            value = self._run_handler(callback, line) if callback is not None else None
        except Exception as error:
            self._emit(
                {
                    "type": "event",
                    "event": "handler_error",
                    "method": line["type"],
                    "request_id": call.request_id,
                    "message": f"{type(error).__name__}: {error}",
                }
            )
            value = None
        if confirmation:
            answer: Dict[str, Any] = {"op": "answer_confirmation", "confirmed": bool(value)}
        else:
            answer = {"op": "answer_input", "value": value if isinstance(value, str) else None}
        self._answer(call, {**answer, "request_id": call.request_id})
