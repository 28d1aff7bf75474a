"""``Client`` and ``AsyncClient``: the operations of ``_ops`` as methods, sent with retries, answered with the
library's models, failing with the library's exceptions."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import update_wrapper
from types import TracebackType
from typing import Any, Generic, Self

import httpx

from engram.client import _ops as ops
from engram.client._http import DEFAULT_URL, Call, P, Retry, T, error_of, headers_for
from engram.errors import StoreUnavailable


class _Base:
    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        retry: Retry | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.url = (url or os.environ.get("ENGRAM_URL") or DEFAULT_URL).rstrip("/")
        self.retry = retry or Retry()
        self._headers = headers_for(api_key if api_key is not None else os.environ.get("ENGRAM_API_KEY"), headers)
        self._timeout = timeout
        # Over plain HTTP no certificate is ever checked: skip loading the CA bundle (50 ms of every CLI call).
        self._tls = not self.url.startswith("http://")

    def _request(self, call: Call[Any]) -> dict[str, Any]:
        headers = {**self._headers, **call.headers}
        return {"method": call.method, "url": call.path, "params": call.params, "json": call.json, "headers": headers}

    def _unreachable(self, exc: httpx.TransportError) -> StoreUnavailable:
        return StoreUnavailable(f"cannot reach Engram at {self.url}: {exc or type(exc).__name__}")


class _SyncOp(Generic[P, T]):
    """An operation as a blocking method: ``client.get(id)`` sends ``_ops.get(id)``."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self.build = build

    def __get__(self, client: Client, owner: type | None = None) -> Callable[P, T]:
        def method(*args: P.args, **kwargs: P.kwargs) -> T:
            return client.send(self.build(*args, **kwargs))

        return update_wrapper(method, self.build)


class _AsyncOp(Generic[P, T]):
    """An operation as a coroutine method: ``await client.get(id)``."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self.build = build

    def __get__(self, client: AsyncClient, owner: type | None = None) -> Callable[P, Awaitable[T]]:
        async def method(*args: P.args, **kwargs: P.kwargs) -> T:
            return await client.send(self.build(*args, **kwargs))

        return update_wrapper(method, self.build)


class Client(_Base):
    """Blocking client of an Engram server. ``url`` defaults to ``ENGRAM_URL`` (else http://127.0.0.1:8420),
    ``api_key`` to ``ENGRAM_API_KEY``: the key names the tenant, role and binding."""

    def __init__(self, url: str | None = None, api_key: str | None = None, **options: Any) -> None:
        transport: httpx.BaseTransport | None = options.pop("transport", None)
        super().__init__(url, api_key, **options)
        self._http = httpx.Client(base_url=self.url, timeout=self._timeout, transport=transport, verify=self._tls)

    def send(self, call: Call[T]) -> T:
        """Send one described request (the methods do this), trying again as ``retry`` allows."""
        attempt = 0
        while True:
            attempt += 1
            response: httpx.Response | None = None
            try:
                response = self._http.request(**self._request(call))
            except httpx.TransportError as exc:
                if not self.retry.again(call, attempt, None):
                    raise self._unreachable(exc) from exc
            if response is not None:
                if response.is_success:
                    return call.parse(response)
                if not self.retry.again(call, attempt, response):
                    raise error_of(response)
            time.sleep(self.retry.wait(attempt, response))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    # One line per operation; ``_ops`` holds its arguments and documentation.
    remember = _SyncOp(ops.remember)
    remember_many = _SyncOp(ops.remember_many)
    get = _SyncOp(ops.get)
    list = _SyncOp(ops.list_memories)
    update = _SyncOp(ops.update)
    archive = _SyncOp(ops.archive)
    unarchive = _SyncOp(ops.unarchive)
    delete = _SyncOp(ops.delete)
    history = _SyncOp(ops.history)
    memory_receipts = _SyncOp(ops.memory_receipts)
    extract = _SyncOp(ops.extract)
    recall = _SyncOp(ops.recall)
    receipt = _SyncOp(ops.receipt)
    relate = _SyncOp(ops.relate)
    forget_subject = _SyncOp(ops.forget_subject)
    add_turn = _SyncOp(ops.add_turn)
    turns = _SyncOp(ops.turns)
    workflow_state = _SyncOp(ops.workflow_state)
    put_workflow_state = _SyncOp(ops.put_workflow_state)
    act = _SyncOp(ops.act)
    actions = _SyncOp(ops.actions)
    action = _SyncOp(ops.action)
    retry_action = _SyncOp(ops.retry_action)
    put_procedure = _SyncOp(ops.put_procedure)
    procedure = _SyncOp(ops.procedure)
    procedure_versions = _SyncOp(ops.procedure_versions)
    approvals = _SyncOp(ops.approvals)
    approve = _SyncOp(ops.approve)
    reject = _SyncOp(ops.reject)
    health = _SyncOp(ops.health)
    metrics = _SyncOp(ops.metrics)
    create_key = _SyncOp(ops.create_key)
    keys = _SyncOp(ops.keys)
    revoke_key = _SyncOp(ops.revoke_key)
    tenant = _SyncOp(ops.tenant)
    update_tenant = _SyncOp(ops.update_tenant)
    policy = _SyncOp(ops.policy)
    update_policy = _SyncOp(ops.update_policy)
    rescan = _SyncOp(ops.rescan)
    rotate_vault = _SyncOp(ops.rotate_vault)
    lifecycle = _SyncOp(ops.lifecycle)
    put_lifecycle = _SyncOp(ops.put_lifecycle)
    decay = _SyncOp(ops.decay)
    prune_receipts = _SyncOp(ops.prune_receipts)
    consolidate = _SyncOp(ops.consolidate)
    jobs = _SyncOp(ops.jobs)

    # The library's names for the same operations, so code moves from ``Engram`` to a client without renaming
    # its calls (the same in AsyncClient; tests/unit/test_client.py pins each to its operation).
    list_keys = keys
    admission_policy = policy
    update_admission_policy = update_policy
    receipts_for = memory_receipts
    lifecycle_policy = lifecycle
    set_lifecycle_policy = put_lifecycle
    tenant_settings = tenant
    buffered_turns = turns


class AsyncClient(_Base):
    """The same as :class:`Client`, for asyncio."""

    def __init__(self, url: str | None = None, api_key: str | None = None, **options: Any) -> None:
        transport: httpx.AsyncBaseTransport | None = options.pop("transport", None)
        super().__init__(url, api_key, **options)
        self._http = httpx.AsyncClient(base_url=self.url, timeout=self._timeout, transport=transport, verify=self._tls)

    async def send(self, call: Call[T]) -> T:
        """Send one described request (the methods do this), trying again as ``retry`` allows."""
        attempt = 0
        while True:
            attempt += 1
            response: httpx.Response | None = None
            try:
                response = await self._http.request(**self._request(call))
            except httpx.TransportError as exc:
                if not self.retry.again(call, attempt, None):
                    raise self._unreachable(exc) from exc
            if response is not None:
                if response.is_success:
                    return call.parse(response)
                if not self.retry.again(call, attempt, response):
                    raise error_of(response)
            await asyncio.sleep(self.retry.wait(attempt, response))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        await self.aclose()

    # One line per operation; ``_ops`` holds its arguments and documentation.
    remember = _AsyncOp(ops.remember)
    remember_many = _AsyncOp(ops.remember_many)
    get = _AsyncOp(ops.get)
    list = _AsyncOp(ops.list_memories)
    update = _AsyncOp(ops.update)
    archive = _AsyncOp(ops.archive)
    unarchive = _AsyncOp(ops.unarchive)
    delete = _AsyncOp(ops.delete)
    history = _AsyncOp(ops.history)
    memory_receipts = _AsyncOp(ops.memory_receipts)
    extract = _AsyncOp(ops.extract)
    recall = _AsyncOp(ops.recall)
    receipt = _AsyncOp(ops.receipt)
    relate = _AsyncOp(ops.relate)
    forget_subject = _AsyncOp(ops.forget_subject)
    add_turn = _AsyncOp(ops.add_turn)
    turns = _AsyncOp(ops.turns)
    workflow_state = _AsyncOp(ops.workflow_state)
    put_workflow_state = _AsyncOp(ops.put_workflow_state)
    act = _AsyncOp(ops.act)
    actions = _AsyncOp(ops.actions)
    action = _AsyncOp(ops.action)
    retry_action = _AsyncOp(ops.retry_action)
    put_procedure = _AsyncOp(ops.put_procedure)
    procedure = _AsyncOp(ops.procedure)
    procedure_versions = _AsyncOp(ops.procedure_versions)
    approvals = _AsyncOp(ops.approvals)
    approve = _AsyncOp(ops.approve)
    reject = _AsyncOp(ops.reject)
    health = _AsyncOp(ops.health)
    metrics = _AsyncOp(ops.metrics)
    create_key = _AsyncOp(ops.create_key)
    keys = _AsyncOp(ops.keys)
    revoke_key = _AsyncOp(ops.revoke_key)
    tenant = _AsyncOp(ops.tenant)
    update_tenant = _AsyncOp(ops.update_tenant)
    policy = _AsyncOp(ops.policy)
    update_policy = _AsyncOp(ops.update_policy)
    rescan = _AsyncOp(ops.rescan)
    rotate_vault = _AsyncOp(ops.rotate_vault)
    lifecycle = _AsyncOp(ops.lifecycle)
    put_lifecycle = _AsyncOp(ops.put_lifecycle)
    decay = _AsyncOp(ops.decay)
    prune_receipts = _AsyncOp(ops.prune_receipts)
    consolidate = _AsyncOp(ops.consolidate)
    jobs = _AsyncOp(ops.jobs)

    # The library's names, as in Client.
    list_keys = keys
    admission_policy = policy
    update_admission_policy = update_policy
    receipts_for = memory_receipts
    lifecycle_policy = lifecycle
    set_lifecycle_policy = put_lifecycle
    tenant_settings = tenant
    buffered_turns = turns
