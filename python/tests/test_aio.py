"""The asyncio API over the same core: calls, progress, concurrency, coroutine
handlers, cancellation, questions."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any, Dict, List

import pytest
from conftest import raw_peer, sdk_extension, services_extension

import octet_host
import octet_host.aio
from octet_host import ComposerService, ServiceCall


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_calls_progress_and_concurrency(workspace: Path, extensions: Path) -> None:
    async def main() -> None:
        async def confirm(question: Dict[str, Any]) -> bool:
            await asyncio.sleep(0)
            return True

        async with octet_host.aio.Host(
            workspace, [sdk_extension(extensions)], on_confirmation=confirm
        ) as host:
            started = await host.start("fixture")
            assert started["api_version"] == "0.4"
            seen: List[int] = []
            out = await host.call(
                "fixture", "progress", {"steps": 3}, progress=lambda e: seen.append(e["sequence"])
            )
            assert out["content"][0]["text"] == "progress sent=3" and seen == [1, 2, 3]
            outs = await asyncio.gather(
                *(host.call("fixture", "echo", {"n": n}) for n in range(32))
            )
            assert [json.loads(o["content"][0]["text"])["n"] for o in outs] == list(range(32))
            confirmed = await host.call("fixture", "confirm", {"prompt": "ok?"})
            assert confirmed["content"][0]["text"] == "confirmed"
            pending = host.submit("call", "fixture", tool="sleep", arguments={"ms": 60_000})
            await pending.cancel()
            with pytest.raises(octet_host.Cancelled):
                await pending.result()
            assert (await host.status())[0]["state"] == "ready"
            kinds = [e["event"] async for e in host.events(timeout=0.2)]
            assert "state" in kinds
        assert host.report is not None

    run(main())


class AsyncComposer(ComposerService):
    def __init__(self) -> None:
        self.loop: Any = None

    async def get(self, params: Any, call: ServiceCall) -> Any:  # type: ignore[override]
        self.loop = asyncio.get_running_loop()
        await asyncio.sleep(0.01)
        return {"text": "from the loop"}


def test_a_coroutine_handler_runs_on_the_loop(workspace: Path, extensions: Path) -> None:
    composer = AsyncComposer()

    async def main() -> Dict[str, Any]:
        async with octet_host.aio.Host(
            workspace, [services_extension(extensions, "peer", "0.2")]
        ) as host:
            await host.start("peer", services={"composer": composer})
            out = await host.call(
                "peer",
                "ask",
                {"requests": [{"id": "get", "method": "composer/get", "params": {}}]},
            )
            assert composer.loop is asyncio.get_running_loop()
            report: Dict[str, Any] = json.loads(out["content"][0]["text"])
            return report

    assert run(main())["get"] == {"result": {"text": "from the loop"}}


def test_a_start_error_is_raised_in_the_loop(workspace: Path, extensions: Path) -> None:
    async def main() -> None:
        async with octet_host.aio.Host(workspace, [sdk_extension(extensions)]) as host:
            with pytest.raises(octet_host.StartError):
                await host.start("missing")

    run(main())


def test_events_wait_on_the_loop_and_end_with_the_session(
    workspace: Path, extensions: Path
) -> None:
    async def main() -> List[str]:
        host = octet_host.aio.Host(workspace, [sdk_extension(extensions)])
        async with host:
            await host.start("fixture")
            threads = threading.active_count()
            listening = asyncio.ensure_future(asyncio.wait_for(_kinds(host.events(timeout=1)), 60))
            await asyncio.sleep(0.1)
            # Waiting for an event holds no thread of its own.
            assert threading.active_count() == threads
            await host.call("fixture", "progress", {"steps": 2})
            kinds = await listening
            assert kinds.count("progress") == 2, kinds
        # After the session ends the iteration ends too, with the last events.
        rest = await asyncio.wait_for(_kinds(host.events()), 30)
        return rest

    rest = run(main())
    assert rest and set(rest) <= {"state", "diagnostic"}, rest


async def _kinds(events: Any) -> List[str]:
    return [e.get("event", "") async for e in events]


def test_cancelling_the_awaiting_task_cancels_the_call_on_the_extension(
    workspace: Path, extensions: Path
) -> None:
    peer = raw_peer(
        extensions,
        "p",
        "0.4",
        "peer.py",
        ["echo", "seen"],
        args=["good"],
        env={"OCTET_PEER_TOOLS": "echo,seen"},
    )

    async def cancels(host: octet_host.aio.Host, count: int) -> List[Any]:
        """The `$/cancelRequest` ids the peer received, once there are `count`."""
        seen: List[Any] = []
        for _ in range(1000):
            out = await host.call("p", "seen")
            seen = json.loads(out["content"][0]["text"])["cancels"]
            if len(seen) >= count:
                break
            await asyncio.sleep(0.01)
        return seen

    async def main() -> None:
        async with octet_host.aio.Host(workspace, [peer]) as host:
            await host.start("p")
            task = asyncio.ensure_future(host.call("p", "echo", {"wait_cancel": True}))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert len(await cancels(host, 1)) == 1
            # `asyncio.wait_for` running out cancels its call the same way.
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(host.call("p", "echo", {"wait_cancel": True}), 0.3)
            assert len(await cancels(host, 2)) == 2
            assert (await host.status())[0]["pending"] == 0

    run(main())
