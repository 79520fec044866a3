"""Progress of a long call: the ``progress`` events of one call, to a callback or a bar.

``host.call(..., progress=callback)`` calls ``callback(event)`` with each progress
event line of that call (``{"event": "progress", "sequence", "progress": {...}}``), in
order and before the call returns. :func:`progress_bar` turns any tqdm-compatible bar
(an object with ``total``, ``n``, ``update(n)`` and ``set_description(text)``; tqdm
itself is not required) into such a callback.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Protocol


class Bar(Protocol):
    """What :func:`progress_bar` needs of a bar: tqdm's own attributes."""

    total: Optional[float]
    n: float

    def update(self, n: float = 1) -> Any:
        """Advances the bar by ``n``."""

    def set_description(self, desc: Optional[str] = None, refresh: bool = True) -> Any:
        """Sets the text beside the bar."""


def progress_bar(bar: Bar) -> Callable[[Dict[str, Any]], None]:
    """A progress callback that drives ``bar``: ``status`` progress sets its total and
    position and its description to the message; ``output`` and ``decoration``
    progress set only the description."""

    def update(event: Dict[str, Any]) -> None:
        progress = event.get("progress") or {}
        kind = progress.get("type")
        if kind == "status":
            total = progress.get("total")
            if isinstance(total, (int, float)) and total != bar.total:
                bar.total = total
            current = progress.get("current")
            if isinstance(current, (int, float)) and current > bar.n:
                bar.update(current - bar.n)
            message = progress.get("message")
            if message:
                bar.set_description(str(message))
        elif kind == "decoration":
            bar.set_description(str(progress.get("label", "")))
        elif kind == "output":
            data = str(progress.get("data", "")).strip()
            if data:
                bar.set_description(data.splitlines()[-1][:80])

    return update
