"""How pagelens calls the DevTools protocol: a call on a Playwright CDP session with a deadline
(:func:`cdp`), and a second, raw connection to Chromium's endpoint whose answers stay bytes
(:func:`raw_call`).

``Accessibility.getFullAXTree`` or the capture's rows are megabytes of JSON. Through Playwright
that JSON is parsed and re-serialised by its driver and parsed again by Python (``json.loads``
runs at 35-44 MB/s), and the Rust core would then walk the Python objects. Read off this socket,
the response message goes to the Rust core as bytes (about 300 MB/s), envelope and all; a small
call over it also skips the driver's round trip.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import urllib.request
from typing import TYPE_CHECKING, Any

from pagelens.errors import PagelensError

if TYPE_CHECKING:
    from playwright.async_api import CDPSession

_ID = re.compile(rb'^\s*\{\s*"id"\s*:\s*(\d+)')


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class DevToolsError(PagelensError, RuntimeError):
    pass


class DevToolsSocket:
    """Flat-mode CDP sessions over one websocket; answers come back as raw bytes."""

    def __init__(self, ws: Any):
        self._ws = ws
        self._next = 0
        self._pending: dict[int, asyncio.Future[bytes]] = {}
        self._sessions: dict[str, str] = {}  # target id -> session id
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def connect(cls, port: int, timeout: float = 10.0) -> DevToolsSocket:
        from websockets.asyncio.client import connect

        deadline = asyncio.get_running_loop().time() + timeout
        url = None
        while url is None:
            try:
                info = await asyncio.to_thread(_get_json, f"http://127.0.0.1:{port}/json/version")
                url = info["webSocketDebuggerUrl"]
            except OSError:
                if asyncio.get_running_loop().time() > deadline:
                    raise DevToolsError(f"no DevTools endpoint on port {port}") from None
                await asyncio.sleep(0.05)
        ws = await connect(url, max_size=None, ping_interval=None, open_timeout=timeout, compression=None)
        return cls(ws)

    async def _read(self) -> None:
        try:
            while True:
                message = await self._ws.recv(decode=False)
                m = _ID.match(message)
                if m is None:
                    self._event(message)
                    continue
                future = self._pending.pop(int(m.group(1)), None)
                if future is not None and not future.done():
                    future.set_result(message)
        except Exception as e:  # the socket closed: fail whatever waits
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(DevToolsError(f"DevTools socket closed: {e}"))
            self._pending.clear()

    def _event(self, message: bytes) -> None:
        if b"Target.detachedFromTarget" in message[:200]:
            params = json.loads(message).get("params", {})
            gone = params.get("sessionId")
            for target, session in list(self._sessions.items()):
                if session == gone:
                    del self._sessions[target]

    async def call(
        self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None, timeout: float = 60.0
    ) -> bytes:
        """The whole response message, unparsed."""
        self._next += 1
        ident = self._next
        request: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session_id is not None:
            request["sessionId"] = session_id
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        try:
            await self._ws.send(json.dumps(request))
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(ident, None)

    async def session_for(self, target_id: str, timeout: float = 60.0) -> str:
        session = self._sessions.get(target_id)
        if session is None:
            reply = json.loads(
                await self.call("Target.attachToTarget", {"targetId": target_id, "flatten": True}, timeout=timeout)
            )
            if "error" in reply:
                raise DevToolsError(f"cannot attach to target {target_id}: {reply['error'].get('message')}")
            session = reply["result"]["sessionId"]
            self._sessions[target_id] = session
        return session

    async def target_call(
        self, target_id: str, method: str, params: dict[str, Any] | None = None, timeout: float = 60.0
    ) -> bytes:
        """A call on a page or frame target; re-attaches once if the old session went away."""
        for attempt in (0, 1):
            session = await self.session_for(target_id, timeout)
            message = await self.call(method, params, session_id=session, timeout=timeout)
            if attempt == 0 and b'"error"' in message[:64] and b"ession" in message[:200]:
                self._sessions.pop(target_id, None)  # "Session with given id not found"
                continue
            return message
        return message

    async def close(self) -> None:
        self._reader.cancel()
        try:
            await self._ws.close()
        except Exception:
            pass


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=2) as response:
        return json.loads(response.read())


async def cdp(session: CDPSession, method: str, params: dict[str, Any] | None = None, timeout: float = 60.0) -> Any:
    """A CDP call with a deadline: a hung renderer gives an error, not a hang."""
    return await asyncio.wait_for(session.send(method, params or {}), timeout)


_FAILED = re.compile(rb'^\s*\{\s*"id"\s*:\s*\d+\s*,\s*"error"')


async def raw_call(
    session: CDPSession,
    target: str | None,
    method: str,
    params: dict[str, Any],
    timeout: float,
    devtools: DevToolsSocket | None,
) -> Any:
    """One call to the DevTools ``target`` behind ``session``: raw bytes over the DevTools socket
    when there is one (parsed in Rust, never by Python's json), else Playwright's dict."""
    if devtools is None or target is None:
        return await cdp(session, method, params, timeout)
    message = await devtools.target_call(target, method, params, timeout)
    if _FAILED.match(message):
        raise DevToolsError(json.loads(message)["error"].get("message", "the browser refused"))
    return message
