"""The protocol core that the synchronous and the asyncio APIs share.

One ``octet-host serve`` process, one reader thread that reads its output lines and
routes each: a ``reply`` to the future of the control line it answers, a ``result``
to its call, questions and ``service_request`` lines to the desk (``_desk.py``: a
bounded pool of worker threads, never the reader), everything else to the event
thread, which calls the subscribers in order and fills the bounded event buffer.
Control lines are written whole under one lock by the thread that sends them.

Every wait ends: serve gives every admitted call its ``result`` (deadlines included),
and when the process goes away every future still open fails with
:class:`~octet_host.errors.HostLost`.
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import queue
import signal
import subprocess
import threading
import time
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Sequence, Tuple

from ._desk import Desk
from ._future import Future
from ._slice import ask_short_slice
from .errors import HostLost, ProtocolError, UnsupportedServeProtocol

#: The serve protocol versions this client speaks.
SUPPORTED_SERVE_PROTOCOLS: Tuple[int, ...] = (1,)

Line = Dict[str, Any]
Subscriber = Callable[[Line], None]

# How long the reader thread leaves reading to a synchronous caller after its wait.
_READER_LINGER = 0.005

# Ends the event thread.
_STOP = object()


class _Call:
    __slots__ = ("future", "progress", "ordered")

    def __init__(self, progress: Optional[Subscriber], ordered: bool) -> None:
        self.future: "Future[Line]" = Future()
        self.progress = progress
        self.ordered = ordered


class Core:
    """One serve process and the routing of its lines."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Optional[Mapping[str, str]] = None,
        stderr: Any = None,
        workers: int = 8,
        event_buffer: int = 4096,
        ready_timeout: float = 30.0,
        on_confirmation: Optional[Callable[[Line], bool]] = None,
        on_input: Optional[Callable[[Line], Optional[str]]] = None,
        prompt_wakeups: bool = True,
    ) -> None:
        self._prompt_wakeups = prompt_wakeups
        self._ids = itertools.count(1)
        self._call_ids = itertools.count(1)
        self._replies: Dict[Any, "Future[Line]"] = {}
        self._calls: Dict[Any, _Call] = {}
        self._reply_calls: Dict[Any, Any] = {}
        self._subscribers: List[Tuple[Optional[str], Subscriber]] = []
        self._events: Deque[Line] = collections.deque(maxlen=max(1, event_buffer))
        self._events_ready = threading.Condition()
        self._listeners: List[Callable[[], None]] = []
        self._write_lock = threading.Lock()
        self._table_lock = threading.Lock()
        self._event_queue: "queue.Queue[Any]" = queue.Queue(maxsize=65536)
        self.desk = Desk(
            self.request, self._emit, workers, on_confirmation=on_confirmation, on_input=on_input
        )
        self.ready_line: "Future[Line]" = Future()
        self.shutdown_line: Optional[Line] = None
        self.closing = False
        self.lost: Optional[HostLost] = None
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            bufsize=0,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin_fd = self.process.stdin.fileno()
        self._readline = self.process.stdout.readline
        self._turn = threading.Condition()
        self._reading = False
        self._eof = False
        self._waiters = 0
        self._last_wait = 0.0
        self._reader = threading.Thread(target=self._read, name="octet-host-reader", daemon=True)
        self._event_thread = threading.Thread(
            target=self._deliver, name="octet-host-events", daemon=True
        )
        self._reader.start()
        self._event_thread.start()
        try:
            ready = self.ready_line.result(timeout=ready_timeout)
        except Exception:
            self.kill()
            raise
        version = ready.get("serve_protocol")
        if version not in SUPPORTED_SERVE_PROTOCOLS:
            self.kill()
            raise UnsupportedServeProtocol(version, SUPPORTED_SERVE_PROTOCOLS)
        self.ready: Line = ready

    # Writing.

    def next_id(self) -> int:
        return next(self._ids)

    def next_call_id(self) -> int:
        return next(self._call_ids)

    def write(self, line: Mapping[str, Any]) -> None:
        """Writes one control line whole. Raises HostLost when serve is gone."""
        data = (json.dumps(line, separators=(",", ":")) + "\n").encode()
        with self._write_lock:
            if self.lost is not None:
                raise self.lost
            view = memoryview(data)
            try:
                while view:
                    written = os.write(self._stdin_fd, view)
                    view = view[written:]
            except (BrokenPipeError, OSError) as error:
                raise HostLost(f"serve's input closed: {error}", self.process.poll()) from None

    def request(self, line: Dict[str, Any]) -> "Future[Line]":
        """Sends a control line with a fresh ``id``; the future resolves to its reply."""
        rid = self.next_id()
        line["id"] = rid
        future: "Future[Line]" = Future()
        with self._table_lock:
            if self.lost is not None:
                future.set_exception(self.lost)
                return future
            self._replies[rid] = future
        try:
            self.write(line)
        except HostLost as lost:
            with self._table_lock:
                self._replies.pop(rid, None)
            if not future.done():
                future.set_exception(lost)
        return future

    def orders(self, progress: Optional[Subscriber]) -> bool:
        """Whether a call with this progress callback settles on the event thread.

        With a progress callback its result goes through the event thread, after the
        call's progress lines, so the callback has seen them all when the call returns.
        Not for a call a subscriber makes (on the event thread itself): its result
        cannot wait behind that subscriber, so it settles at once and its progress
        callbacks run after it."""
        return progress is not None and threading.current_thread() is not self._event_thread

    def call(
        self, line: Dict[str, Any], progress: Optional[Subscriber]
    ) -> Tuple[Any, "Future[Line]"]:
        """Sends a call line; the future resolves to its ``result`` line, or to the
        error reply that refused its admission."""
        call_id = line.get("call_id")
        if call_id is None:
            call_id = line["call_id"] = self.next_call_id()
        rid = self.next_id()
        line["id"] = rid
        state = _Call(progress, self.orders(progress))
        with self._table_lock:
            if self.lost is not None:
                state.future.set_exception(self.lost)
                return call_id, state.future
            self._calls[call_id] = state
            self._reply_calls[rid] = call_id
        try:
            self.write(line)
        except HostLost as lost:
            with self._table_lock:
                self._calls.pop(call_id, None)
                self._reply_calls.pop(rid, None)
            if not state.future.done():
                state.future.set_exception(lost)
        return call_id, state.future

    # Events.

    def subscribe(self, kind: Optional[str], callback: Subscriber) -> Callable[[], None]:
        entry = (kind, callback)
        with self._table_lock:
            self._subscribers.append(entry)

        def unsubscribe() -> None:
            with self._table_lock:
                if entry in self._subscribers:
                    self._subscribers.remove(entry)

        return unsubscribe

    def next_event(self, timeout: Optional[float]) -> Optional[Line]:
        """The oldest buffered event, waiting at most ``timeout`` (None: until one comes
        or serve is gone). None when none came."""
        with self._events_ready:
            if not self._events and not self.finished():
                self._events_ready.wait_for(lambda: bool(self._events) or self.finished(), timeout)
            return self._events.popleft() if self._events else None

    def finished(self) -> bool:
        """True once serve is gone or wrote its shutdown line."""
        return self.lost is not None or self.shutdown_line is not None

    def listen(self, wake: Callable[[], None]) -> Callable[[], None]:
        """Calls ``wake()`` on the event thread after each event is buffered, and once
        more when the events end (how asyncio waits without a thread). Returns a
        function that stops it."""
        with self._events_ready:
            self._listeners.append(wake)

        def stop() -> None:
            with self._events_ready:
                if wake in self._listeners:
                    self._listeners.remove(wake)

        return stop

    def _wake_listeners(self) -> None:
        with self._events_ready:
            listeners = list(self._listeners)
        for wake in listeners:
            try:
                wake()
            except Exception:  # a listener whose loop closed
                pass

    def _emit(self, line: Line) -> None:
        self._event_queue.put(line)

    def _deliver(self) -> None:
        while True:
            item = self._event_queue.get()
            if item is _STOP:
                with self._events_ready:
                    self._events_ready.notify_all()
                self._wake_listeners()
                return
            if isinstance(item, tuple):
                # A call's ordered result, after its progress.
                state, line = item
                if not state.future.done():
                    state.future.set_result(line)
                continue
            line = item
            call = line.pop("_call", None)
            if call is not None and call.progress is not None:
                self._safely(call.progress, line)
            kind = line.get("event", line.get("type"))
            with self._table_lock:
                subscribers = [cb for k, cb in self._subscribers if k is None or k == kind]
                if kind == "diagnostic" and line.get("kind") == "stderr":
                    subscribers += [cb for k, cb in self._subscribers if k == "stderr"]
            for callback in subscribers:
                self._safely(callback, line)
            with self._events_ready:
                self._events.append(line)
                self._events_ready.notify_all()
            self._wake_listeners()

    def _safely(self, callback: Subscriber, line: Line) -> None:
        try:
            callback(line)
        except Exception as error:  # a subscriber's fault is reported, never fatal
            if line.get("event") != "callback_error":
                self._emit(
                    {
                        "type": "event",
                        "event": "callback_error",
                        "message": f"{type(error).__name__}: {error}",
                        "of": line.get("event", line.get("type")),
                    }
                )

    # Reading. One thread at a time reads and routes a line (so lines are routed in
    # order): the reader thread, or a synchronous caller waiting for its own answer.
    # While such a caller waits it reads itself, so its answer costs one wake-up (its
    # own) rather than two (the reader's, then its); the reader thread steps aside
    # while callers wait, and takes over again once none has waited for a moment.

    def _read_one(self) -> bool:
        """Reads and routes one line; False at the end of serve's output."""
        try:
            raw = self._readline()
        except Exception as error:  # the pipe broke under the reader
            self._protocol_error(f"reading serve's output failed: {error}")
            return False
        if not raw:
            return False
        try:
            line = json.loads(raw)
        except ValueError:
            self._protocol_error(f"serve wrote a line that is not JSON: {raw[:200]!r}")
            return True
        if not isinstance(line, dict):
            self._protocol_error(f"serve wrote a line that is not an object: {raw[:200]!r}")
            return True
        self._route(line)
        return True

    def _take_turn(self, reader: bool) -> bool:
        """Under ``_turn``: whether the caller may read now (and then it does)."""
        if self._reading or self._eof:
            return False
        if reader and (self._waiters > 0 or time.monotonic() - self._last_wait < _READER_LINGER):
            return False
        self._reading = True
        return True

    def _end_turn(self, more: bool) -> None:
        with self._turn:
            self._reading = False
            if not more:
                self._eof = True
            self._turn.notify_all()
        if not more:
            self._ended()

    def _read(self) -> None:
        if self._prompt_wakeups:
            ask_short_slice()
        while True:
            with self._turn:
                while not self._take_turn(reader=True):
                    if self._eof:
                        return
                    self._turn.wait(_READER_LINGER)
            more = self._read_one()
            self._end_turn(more)
            if not more:
                return

    def wait(self, future: "Future[Any]") -> None:
        """Waits for ``future``, reading serve's output meanwhile when no one else is."""
        if future.done():
            return
        with self._turn:
            self._waiters += 1
        try:
            while not future.done():
                with self._turn:
                    if future.done():
                        break
                    if not self._take_turn(reader=False):
                        if self._eof:
                            break
                        # Another thread reads; it notifies after each line.
                        self._turn.wait(_READER_LINGER)
                        continue
                more = self._read_one()
                self._end_turn(more)
                if not more:
                    break
        finally:
            with self._turn:
                self._waiters -= 1
                self._last_wait = time.monotonic()
        future.wait()

    def _protocol_error(self, message: str) -> None:
        error = ProtocolError(message)
        if not self.ready_line.done():
            self.ready_line.set_exception(error)
        self._emit({"type": "event", "event": "protocol_error", "message": message})

    def _route(self, line: Line) -> None:
        kind = line.get("type")
        if kind == "result":
            with self._table_lock:
                state = self._calls.pop(line.get("call_id"), None)
            if state is None:
                self._emit({**line, "type": "event", "event": "unmatched_result"})
            elif state.ordered:
                self._event_queue.put((state, line))
            else:
                state.future.set_result(line)
        elif kind == "reply":
            rid = line.get("id")
            with self._table_lock:
                future = self._replies.pop(rid, None)
                call_id = self._reply_calls.pop(rid, None)
                state = None
                if call_id is not None and not line.get("ok"):
                    state = self._calls.pop(call_id, None)
            if future is not None:
                future.set_result(line)
            elif state is not None:
                state.future.set_result(line)
        elif kind == "event":
            call_id = line.get("call_id")
            if line.get("event") == "progress" and call_id is not None:
                with self._table_lock:
                    state = self._calls.get(call_id)
                if state is not None and state.progress is not None:
                    line["_call"] = state
            self._emit(line)
        elif kind == "service_request":
            self.desk.serve(line)
        elif kind == "trace":
            self._emit(dict(line, event="trace"))
        elif kind in ("confirmation_request", "input_request"):
            self._emit(dict(line, event=kind))
            self.desk.ask(line)
        elif kind == "request_cancelled":
            self.desk.withdraw(line.get("request_id"), line.get("reason"))
            self._emit(dict(line, event="request_cancelled"))
        elif kind == "ready":
            if not self.ready_line.done():
                self.ready_line.set_result(line)
        elif kind == "shutdown":
            self.shutdown_line = line
            self._emit(dict(line, event="shutdown"))
        else:
            self._protocol_error(f"serve wrote a line of unknown type {kind!r}")

    def _ended(self) -> None:
        """serve's output ended: fail everything still waiting."""
        status = None
        try:
            status = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
        with self._table_lock:
            orderly = self.closing and (self.shutdown_line is not None or not self._replies)
            what = "serve exited" if status is not None else "serve closed its output"
            self.lost = HostLost(
                f"{what} (exit status {status})"
                + ("" if orderly else " while calls or requests were still waiting"),
                status,
            )
            replies, self._replies = self._replies, {}
            calls, self._calls = self._calls, {}
            self._reply_calls.clear()
        if not self.ready_line.done():
            self.ready_line.set_exception(self.lost)
        for future in replies.values():
            if not future.done():
                future.set_exception(self.lost)
        for state in calls.values():
            if not state.future.done():
                state.future.set_exception(self.lost)
        self.desk.withdraw_all("host_lost")
        if not orderly:
            self._emit(
                {
                    "type": "event",
                    "event": "host_lost",
                    "message": str(self.lost),
                    "exit_status": status,
                }
            )
        self._event_queue.put(_STOP)
        self.desk.close()

    # Ending.

    def close(self, timeout: float = 10.0) -> Optional[Line]:
        """The ordered shutdown: ``shutdown``, its report, then the process's exit;
        killed by pid when it does not come in ``timeout`` seconds."""
        self.closing = True
        report: Optional[Line] = None
        if self.lost is None and self.process.poll() is None:
            try:
                report = self.request({"op": "shutdown"}).result(timeout=timeout)
            except Exception:
                report = None
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=5 if report is not None else 1)
        except subprocess.TimeoutExpired:
            self.kill()
        self._reader.join(timeout=10)
        self._event_thread.join(timeout=10)
        return report

    def kill(self) -> None:
        """Kills serve by pid (its guardian then ends every extension's process group)."""
        self.closing = True
        if self.process.poll() is None:
            try:
                os.kill(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
