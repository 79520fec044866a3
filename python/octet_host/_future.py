"""A one-shot result slot: what the core resolves and the APIs wait on.

Lighter than ``concurrent.futures.Future`` on the hot path: the waiter blocks on a
plain lock that the setter releases (one wake-up, no condition variable), and
callbacks (the asyncio bridge) run on the thread that sets it.
"""

from __future__ import annotations

import threading
from typing import Callable, Generic, List, Optional, TypeVar

T = TypeVar("T")


class Future(Generic[T]):
    """Resolved once, with a value or an exception."""

    __slots__ = ("_lock", "_value", "_error", "_done", "_callbacks", "_guard")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()
        self._guard = threading.Lock()
        self._value: Optional[T] = None
        self._error: Optional[BaseException] = None
        self._done = False
        self._callbacks: List[Callable[["Future[T]"], None]] = []

    def done(self) -> bool:
        """True once resolved."""
        return self._done

    def _resolve(self, value: Optional[T], error: Optional[BaseException]) -> bool:
        with self._guard:
            if self._done:
                return False
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
        self._lock.release()
        for callback in callbacks:
            callback(self)
        return True

    def set_result(self, value: T) -> bool:
        """Resolves it with ``value``; False when it was already resolved."""
        return self._resolve(value, None)

    def set_exception(self, error: BaseException) -> bool:
        """Resolves it with ``error``; False when it was already resolved."""
        return self._resolve(None, error)

    def add_done_callback(self, callback: Callable[["Future[T]"], None]) -> None:
        """Calls ``callback(self)`` once resolved (at once if it is)."""
        with self._guard:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits until resolved (at most ``timeout`` seconds); True when it is."""
        if self._done:
            return True
        if self._lock.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
            self._lock.release()
            return True
        return self._done

    def result(self, timeout: Optional[float] = None) -> T:
        """The value, or the exception raised; ``TimeoutError`` after ``timeout``."""
        if not self.wait(timeout):
            raise TimeoutError(f"no answer within {timeout} s")
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def exception(self) -> Optional[BaseException]:
        """The exception, once resolved with one."""
        return self._error
