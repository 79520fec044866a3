"""What both APIs share: the options of a session, the serve command line they make
of them, and the members that only read the core."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from ._binary import find_binary
from ._core import Core, Line, Subscriber
from ._ops import milliseconds

Json = Dict[str, Any]
PathLike = Union[str, "os.PathLike[str]"]


class Session:
    """The options of one ``octet-host serve`` session and what reads its core.

    ``workspace`` and ``extension_dirs`` are serve's ``--workspace`` and
    ``--extension-dir``; ``no_global``, ``no_input``, ``tool_composition``,
    ``composition_store``, ``composition_timeout`` (seconds), ``resource_refs``,
    ``operation_discovery``, ``bulk_storage`` and ``startup_timeout`` (seconds) its
    flags (``prompt_wakeups=False`` is ``--no-prompt-wakeups``, and keeps the client's
    reader thread on the default slice too; ``wire_trace=True`` is ``--wire-trace``:
    every frame comes as a ``trace`` event); ``serve_args`` more flags as they are.
    ``binary`` overrides
    ``OCTET_HOST_BIN``. ``on_confirmation(line) -> bool`` and ``on_input(line) -> str |
    None`` answer the extensions' questions (denied and cancelled without them);
    ``workers`` threads serve them and the bound services; the last ``event_buffer``
    events are kept; ``ready_timeout`` bounds the wait for serve's ``ready`` line and
    ``shutdown_timeout`` the ordered shutdown before serve is killed by pid.
    """

    #: Whether the constructor starts serve (the synchronous API) or entering the
    #: session does (asyncio's, which must not block its loop).
    _OPEN_AT_ONCE = True

    def __init__(
        self,
        workspace: PathLike,
        extension_dirs: Sequence[PathLike] = (),
        *,
        no_global: bool = True,
        no_input: bool = False,
        prompt_wakeups: bool = True,
        wire_trace: bool = False,
        tool_composition: bool = False,
        composition_store: Optional[PathLike] = None,
        composition_timeout: Optional[float] = None,
        resource_refs: bool = False,
        operation_discovery: bool = False,
        bulk_storage: Optional[PathLike] = None,
        startup_timeout: Optional[float] = None,
        on_confirmation: Optional[Callable[[Json], Any]] = None,
        on_input: Optional[Callable[[Json], Any]] = None,
        binary: Optional[str] = None,
        serve_args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
        stderr: Any = None,
        workers: int = 8,
        event_buffer: int = 4096,
        ready_timeout: float = 30.0,
        shutdown_timeout: float = 10.0,
    ) -> None:
        # The command line of `octet-host serve` for these options.
        argv = [find_binary(binary), "serve", "--workspace", os.fspath(workspace)]
        for directory in extension_dirs:
            argv += ["--extension-dir", os.fspath(directory)]
        flags = {
            "--no-global": no_global,
            "--no-input": no_input,
            "--no-prompt-wakeups": not prompt_wakeups,
            "--wire-trace": wire_trace,
            "--tool-composition": tool_composition,
            "--resource-refs": resource_refs,
            "--operation-discovery": operation_discovery,
        }
        argv += [flag for flag, on in flags.items() if on]
        if composition_store is not None:
            argv += ["--composition-store", os.fspath(composition_store)]
        if composition_timeout is not None:
            argv += ["--composition-timeout", f"{composition_timeout:g}"]
        if bulk_storage is not None:
            argv += ["--bulk-storage", os.fspath(bulk_storage)]
        if startup_timeout is not None:
            argv += ["--startup-timeout", f"{milliseconds(startup_timeout)}ms"]
        self._argv = argv + list(serve_args)
        self._options: Dict[str, Any] = dict(
            env=env,
            stderr=stderr,
            workers=workers,
            event_buffer=event_buffer,
            ready_timeout=ready_timeout,
            on_confirmation=on_confirmation,
            on_input=on_input,
            prompt_wakeups=prompt_wakeups,
        )
        self._shutdown_timeout = shutdown_timeout
        self._opened: Optional[Core] = None
        #: The shutdown report, once the session ended in order.
        self.report: Optional[Json] = None
        if self._OPEN_AT_ONCE:
            self._open()

    def _open(self) -> Core:
        """Starts serve and reads its ``ready`` line (blocking)."""
        self._opened = Core(self._argv, **self._options)
        return self._opened

    @property
    def _core(self) -> Core:
        if self._opened is None:
            raise RuntimeError("the session is not open: enter its `with` block first")
        return self._opened

    def _closed(self, line: Optional[Line]) -> Optional[Json]:
        self.report = (line or {}).get("report")
        return self.report

    @property
    def ready(self) -> Json:
        """serve's ``ready`` line (``version``, ``octet_version``, ``session_id``, ...)."""
        return self._core.ready

    @property
    def pid(self) -> int:
        """serve's process id."""
        return self._core.process.pid

    def kill(self) -> None:
        """Kills serve at once; its guardian ends every extension."""
        self._core.kill()

    def subscribe(self, callback: Subscriber, kind: Optional[str] = None) -> Callable[[], None]:
        """Calls ``callback(event)`` for every event (or those of ``kind``: ``progress``,
        ``state``, ``tools_changed``, ``diagnostic``, ``stderr`` for extensions' stderr
        lines, ``host_lost``, ``handler_error``, ...) on the event thread, in order.
        Returns a function that unsubscribes. A callback may call the host; while it
        runs, later events and results of calls with a progress callback wait."""
        return self._core.subscribe(kind, callback)


__all__: List[str] = ["Session"]
