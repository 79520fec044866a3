"""What a service handler learns about the request it serves."""

from __future__ import annotations

import threading
from typing import Any, Dict, Optional


class ServiceCall:
    """One ``service_request`` being served.

    ``withdrawn`` is set when serve writes ``request_cancelled`` for it (the parent
    settled, the extension cancelled, its generation ended, or serve is closing): a
    long handler may poll :meth:`is_withdrawn` or wait on it and stop early; its answer
    is then not sent.
    """

    def __init__(self, line: Dict[str, Any]) -> None:
        self.request_id: int = int(line["request_id"])
        self.extension: str = str(line["extension"])
        self.generation: int = int(line.get("generation") or 0)
        self.method: str = str(line["method"])
        self.owner: Optional[Dict[str, Any]] = line.get("owner")
        self.parent_request_id: Optional[int] = line.get("parent_request_id")
        self.independent: bool = bool(line.get("independent", False))
        self.withdrawn = threading.Event()
        self.withdrawn_reason: Optional[str] = None

    def is_withdrawn(self) -> bool:
        """True once serve no longer wants the answer."""
        return self.withdrawn.is_set()

    def __repr__(self) -> str:
        return (
            f"ServiceCall({self.method!r}, request_id={self.request_id}, "
            f"extension={self.extension!r}, generation={self.generation})"
        )
