"""A local OpenAI-compatible chat server for tests: real HTTP, spoken to by the real `openai`
client. Its replies come from a function of the request's messages (a scripted model, since no
model can run here); it can fail the first requests with 429 or 500 to test retries, and it
records every request."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Callable
from typing import Any

Reply = Callable[[list[dict[str, Any]]], str]


class LLMServer:
    def __init__(self, reply: Reply):
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.failures: list[int] = []  # status codes to answer with, first in first out
        self.delay = 0.0
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                server.requests.append(body)
                if server.failures:
                    status = server.failures.pop(0)
                    return self._send(status, {"error": {"message": f"scripted failure {status}", "type": "test"}})
                if server.delay:
                    time.sleep(server.delay)
                # `n` samples: the scripted model is asked once per sample.
                texts = [server.reply(body["messages"]) for _ in range(int(body.get("n") or 1))]
                text = "".join(texts)
                prompt_tokens = sum(len(m.get("content") or "") for m in body["messages"]) // 4
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "scripted"),
                        "choices": [
                            {"index": k, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
                            for k, t in enumerate(texts)
                        ],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": len(text) // 4,
                            "total_tokens": prompt_tokens + len(text) // 4,
                        },
                    },
                )

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
