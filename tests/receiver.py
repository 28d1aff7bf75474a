"""A real HTTP receiver for webhook actions, as a careful one is written: it applies each Idempotency-Key
once and answers a repeat with what the first delivery got. Tests script its answers per key."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Receiver:
    url: str = ""
    deliveries: Counter[str] = field(default_factory=Counter)  # every request, by key
    applied: Counter[str] = field(default_factory=Counter)  # what the receiver did, by key
    bodies: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, dict[str, str]] = field(default_factory=dict)
    script: dict[str, list[int]] = field(default_factory=dict)  # statuses to answer first, per key
    hang: dict[str, float] = field(default_factory=dict)  # seconds to wait after applying, per key (once)
    arrived: threading.Event = field(default_factory=threading.Event)  # a hanging request came in
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_applied(self, keys: set[str], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not keys <= set(self.applied):
            assert time.monotonic() < deadline, f"not applied: {sorted(keys - set(self.applied))[:10]}"
            time.sleep(0.05)


@contextmanager
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            key = self.headers.get("Idempotency-Key", "")
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"null")
            hang = 0.0
            with state.lock:
                state.deliveries[key] += 1
                planned = state.script.get(key)
                status = planned.pop(0) if planned else 200
                if status == 200 and not state.applied[key]:
                    state.applied[key] += 1  # applied once, whatever the repeats
                    state.bodies[key] = body
                    state.headers[key] = dict(self.headers)
                    hang = state.hang.pop(key, 0.0)
            if hang:
                state.arrived.set()
                time.sleep(hang)
            payload = json.dumps({"ok": status == 200}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a sender killed mid-request (the point of some tests)

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
