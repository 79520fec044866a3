"""Finding the ``octet-host`` binary: ``OCTET_HOST_BIN``, then the one this package
installed, then PATH."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from typing import List, Optional

from .errors import BinaryNotFound

_NAME = "octet-host.exe" if sys.platform == "win32" else "octet-host"


def _candidates() -> List[str]:
    # The wheel puts the binary in the scripts directory of the environment it is
    # installed into: the interpreter's own, or the user scheme's.
    seen: List[str] = []
    for scheme in (None, f"{os.name}_user"):
        try:
            scripts = (
                sysconfig.get_path("scripts")
                if scheme is None
                else sysconfig.get_path("scripts", scheme)
            )
        except KeyError:
            continue
        path = os.path.join(scripts, _NAME)
        if path not in seen:
            seen.append(path)
    beside = os.path.join(os.path.dirname(sys.executable), _NAME)
    if beside not in seen:
        seen.append(beside)
    return seen


def find_binary(explicit: Optional[str] = None) -> str:
    """The path of the binary to run: ``explicit``, else ``OCTET_HOST_BIN``, else the
    package's own, else ``octet-host`` on PATH. Raises :class:`BinaryNotFound`."""
    chosen = explicit or os.environ.get("OCTET_HOST_BIN")
    if chosen:
        if os.path.isfile(chosen) and os.access(chosen, os.X_OK):
            return chosen
        raise BinaryNotFound(
            f"{chosen!r} (from {'the binary argument' if explicit else 'OCTET_HOST_BIN'}) "
            "is not an executable file"
        )
    for path in _candidates():
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    on_path = shutil.which(_NAME)
    if on_path:
        return on_path
    raise BinaryNotFound(
        "no octet-host binary: install the octet-host package (pip install octet-host), "
        "or set OCTET_HOST_BIN to the binary built by `cargo build --release`"
    )
