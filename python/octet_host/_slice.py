"""A short scheduler slice for the client's own reader thread (Linux 6.12 and later).

The same mechanism as serve's prompt wake-ups (src/slice.rs): under ``SCHED_OTHER`` a
thread may ask for a slice of its own (``sched_attr.sched_runtime``, 0.1 ms here, no
privilege needed), so that when a line arrives on a machine whose CPUs other programs
keep busy it preempts them at once instead of waiting out their slice. Its share of
the CPU is unchanged. Only the client's reader thread asks, never a thread of the
embedder's. Elsewhere (other kernels, other systems, other policies) nothing changes.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct

#: The slice asked for, in nanoseconds (serve's ``SHORT_SLICE``).
SHORT_SLICE_NS = 100_000

_SYSCALLS = {"x86_64": (314, 315), "aarch64": (274, 275)}  # sched_setattr, sched_getattr
_ATTR = struct.Struct("=IIQiIQQQ")  # struct sched_attr, SCHED_ATTR_SIZE_VER0 (48 bytes)
_SCHED_OTHER = 0
_SCHED_FLAG_RESET_ON_FORK = 1


def ask_short_slice() -> bool:
    """Asks for the short slice for the calling thread, for as long as it runs; True
    when the kernel took it.

    The client asks it for its own reader thread. An embedder may ask it for a thread
    of its own that makes calls (``octet_host.prompt_wakeups()``): its calls then wake
    it at once on a busy machine too. Threads it starts get the default slice."""
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None or not hasattr(os, "sched_getscheduler"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        buf = ctypes.create_string_buffer(_ATTR.size)
        if libc.syscall(numbers[1], 0, buf, _ATTR.size, 0) != 0:
            return False
        size, policy, flags, nice, priority, runtime, deadline, period = _ATTR.unpack(buf.raw)
        if policy != _SCHED_OTHER:
            return False
        attr = _ATTR.pack(
            _ATTR.size,
            policy,
            _SCHED_FLAG_RESET_ON_FORK,
            nice,
            priority,
            SHORT_SLICE_NS,
            deadline,
            period,
        )
        return bool(libc.syscall(numbers[0], 0, ctypes.c_char_p(attr), 0) == 0)
    except (OSError, AttributeError, ValueError):
        return False
