"""A chat-completions endpoint for tests of the LLM-backed features: ``http.server`` on 127.0.0.1 in a thread
(real sockets, real status codes, real timeouts), answering from a script."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "fake-chat-mini"


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion(content: str) -> Answer:
    body = {
        "id": "chatcmpl-1", "object": "chat.completion", "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }  # fmt: skip
    return Answer(body=json.dumps(body).encode())


class ChatServer:
    """A chat-completions endpoint answering from a script: each request takes the next answer (a 500 when
    the script is spent), and is kept with its headers for the test to read."""

    def __init__(self) -> None:
        self.script: list[Answer] = []
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    answer = server.script.pop(0) if server.script else Answer(500, b'{"error": "no answer left"}')
                time.sleep(answer.delay)
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer.body)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                    self.wfile.write(answer.body)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, *answers: Answer) -> None:
        self.script.extend(answers)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
