"""Shared set-up: the installed binary, extension manifests, hosts.

The tests import the installed ``octet_host`` (``.ci/run`` installs the wheel into a
fresh venv and runs them from outside the source tree). The extensions are real: the
SDK's test extension (the binary re-invoked as ``__extension test-extension``) and
the repository's stdlib-only raw peers in ``tests/fixtures``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set

import pytest

import octet_host
from octet_host._core import Core

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"

SDK_TOOLS = [
    "echo",
    "sleep",
    "progress",
    "confirm",
    "ask",
    "notify",
    "crash",
    "big",
    "fail",
    "panic",
    "env",
    "events",
]


def toml_list(items: List[str]) -> str:
    return json.dumps(items)


def write_manifest(root: Path, name: str, text: str) -> Path:
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "extension.toml").write_text(text)
    return directory


def sdk_extension(root: Path, name: str = "fixture") -> Path:
    """The SDK test extension (API 0.4), as in docs/serve-protocol.md's transcript."""
    exe = octet_host.find_binary()
    return write_manifest(
        root,
        name,
        f"""name = "{name}"
version = "0.1.0"
api_version = "0.4"

[entrypoint]
command = {json.dumps(exe)}
args = ["__extension", "test-extension"]

[contributes]
tools = {toml_list(SDK_TOOLS)}
commands = ["fixture"]
hooks = ["before_prompt"]
context = true
ui = ["status"]
tool_renderers = ["echo"]
notifications = true
confirmations = true
menu = true
""",
    )


def env_table(env: Optional[Dict[str, str]]) -> str:
    return ", ".join(f"{k} = {json.dumps(v)}" for k, v in (env or {}).items())


def raw_peer(
    root: Path,
    name: str,
    api: str,
    script: str,
    tools: List[str],
    *,
    args: Sequence[str] = (),
    env: Optional[Dict[str, str]] = None,
    extra: str = "",
    contributes: str = "",
) -> Path:
    """A manifest running ``tests/fixtures/<script>`` with this interpreter."""
    argv = [str(FIXTURES / script), *args]
    return write_manifest(
        root,
        name,
        f"""name = "{name}"
version = "0.1.0"
api_version = "{api}"

[entrypoint]
command = {json.dumps(sys.executable)}
args = {json.dumps(argv)}
env = {{ {env_table(env)} }}
{extra}
[contributes]
tools = {toml_list(tools)}
{contributes}""",
    )


def services_extension(
    root: Path,
    name: str = "peer",
    api: str = "0.4",
    env: Optional[Dict[str, str]] = None,
    extra: str = "",
) -> Path:
    """The raw Wave-1 peer: its tool ``ask`` sends any host request and reports the
    answers; ``seen`` reports what it received."""
    hooks = 'hooks = ["model_turn_start"]\n' if api == "0.4" else ""
    return raw_peer(
        root,
        name,
        api,
        "services_peer.py",
        ["ask", "answers", "seen"],
        env=env,
        extra=extra,
        contributes=hooks,
    )


def peer03_extension(
    root: Path,
    name: str = "prov",
    select: str = "provider_auth,provider_catalog,session_lifecycle",
) -> Path:
    """The raw API 0.3 peer with the optional capabilities in ``select``."""
    return raw_peer(
        root,
        name,
        "0.3",
        "peer03.py",
        ["ask", "seen"],
        args=["good"],
        env={"OCTET_PEER_TOOLS": "ask,seen", "OCTET_PEER_SELECT": select},
    )


def resource_extension(root: Path, name: str = "circuits") -> Path:
    """The raw resource peer (section 2.26)."""
    tools = ["make", "use", "inspect", "plain", "release", "register", "disposed", "grow"]
    return raw_peer(root, name, "0.4", "resource_peer.py", [*tools, "crash"])


def ask(
    host: octet_host.Host, extension: str, requests: List[Dict[str, Any]], timeout: float = 60.0
) -> Dict[str, Any]:
    """Runs the peer's ``ask`` tool and returns its report of every answer."""
    out = host.call(extension, "ask", {"requests": requests}, timeout=timeout)
    report: Dict[str, Any] = json.loads(out["content"][0]["text"])
    return report


def eventually(check: Callable[[], object], timeout: float = 20.0) -> bool:
    """Whether ``check()`` holds within ``timeout`` seconds (polled)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return bool(check())


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


#: Every operation a test sent, over the session.
SENT_OPS: Set[str] = set()


@pytest.fixture(autouse=True, scope="session")
def record_operations() -> Iterator[None]:
    """Records the ``op`` of every control line the client writes."""
    original = Core.write

    def write(self: Core, line: Mapping[str, Any]) -> None:
        SENT_OPS.add(str(line.get("op")))
        original(self, line)

    Core.write = write  # type: ignore[method-assign]
    yield
    Core.write = original  # type: ignore[method-assign]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A whole run (every test file, no selection) must have sent every operation of
    the schema's control lines through the client."""
    config = session.config
    whole = not config.getoption("keyword") and not config.getoption("markexpr")
    whole = whole and all(Path(arg).resolve() == Path(__file__).parent for arg in config.args)
    if exitstatus != 0 or not whole:
        return
    missing = sorted(set(octet_host.OPS) - SENT_OPS)
    if missing:
        print(f"\noperations no test sent through the client: {missing}")
        session.exitstatus = 1


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def extensions(tmp_path: Path) -> Path:
    path = tmp_path / "extensions"
    path.mkdir()
    return path


@pytest.fixture
def fixture_host(workspace: Path, extensions: Path) -> Iterator[octet_host.Host]:
    """A host over the SDK test extension, started as ``fixture``."""
    with octet_host.Host(
        workspace,
        [sdk_extension(extensions)],
        on_confirmation=lambda q: True,
        on_input=lambda q: "typed",
    ) as host:
        host.start("fixture")
        yield host
