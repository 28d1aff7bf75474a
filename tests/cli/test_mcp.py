"""The MCP server with the SDK's own client, over both transports: `engram mcp` on stdio as a subprocess, and
streamable HTTP at /mcp of a real `engram serve`. Each acts as its API key."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.cli.conftest import ENGRAM, cli_env, create_key, run_cli


def data(result: Any) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    return " ".join(getattr(block, "text", "") for block in result.content)


@asynccontextmanager
async def over_http(url: str, key: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30)
    async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
        yield client


def over_stdio(data_dir: Path, key: str) -> Client:
    params = StdioServerParameters(
        command=str(ENGRAM), args=["mcp", "--data-dir", str(data_dir)], env=cli_env(ENGRAM_API_KEY=key)
    )
    return Client(params)


async def check_the_tools(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"remember", "recall", "get", "list", "update", "forget"}
    assert tools["recall"].annotations and tools["recall"].annotations.read_only_hint is True
    assert tools["forget"].annotations and tools["forget"].annotations.destructive_hint is True
    assert tools["remember"].annotations and tools["remember"].annotations.read_only_hint is False
    assert "content" in tools["remember"].input_schema["required"]
    assert tools["recall"].output_schema and "receipt_id" in tools["recall"].output_schema["properties"]

    wrote = data(await client.call_tool("remember", {"content": "Invoices for Acme go out in EUR",
                                                      "kind": "semantic", "fact_key": "invoice.currency",
                                                      "confidence": 0.9}))  # fmt: skip
    assert wrote["status"] == "active" and wrote["revision"] == 1
    recalled = data(await client.call_tool("recall", {"query": "which currency do invoices use?"}))
    assert recalled["items"][0]["id"] == wrote["id"] and "EUR" in recalled["packet"] and recalled["receipt_id"]

    memory = await client.read_resource(f"engram://memories/{wrote['id']}")
    assert json.loads(memory.contents[0].text)["content"] == "Invoices for Acme go out in EUR"  # type: ignore[union-attr]
    receipt = await client.read_resource(f"engram://receipts/{recalled['receipt_id']}")
    assert wrote["id"] in receipt.contents[0].text  # type: ignore[union-attr]

    updated = data(await client.call_tool("update", {"memory_id": wrote["id"], "revision": 1, "importance": 0.8}))
    assert updated["revision"] == 2
    stale = error_text(await client.call_tool("update", {"memory_id": wrote["id"], "revision": 1, "importance": 0.1}))
    assert "revision_conflict" in stale
    listed = data(await client.call_tool("list", {"fact_key": "invoice.currency"}))
    assert [m["id"] for m in listed["items"]] == [wrote["id"]]
    refused = error_text(await client.call_tool("forget", {"memory_id": wrote["id"]}))
    assert "permission_denied" in refused and "reviewer" in refused
    bad = error_text(await client.call_tool("remember", {"content": "x", "kind": "feelings"}))
    assert "kind" in bad


async def test_stdio_acts_as_its_key(data_dir: Path, workdir: Path) -> None:
    key = create_key(data_dir, workdir, "acme", role="agent")
    async with over_stdio(data_dir, key) as client:
        await check_the_tools(client)


async def test_stdio_refuses_to_start_without_a_valid_key(data_dir: Path, workdir: Path) -> None:
    missing = run_cli("mcp", "--data-dir", data_dir, cwd=workdir)
    assert missing.returncode == 5 and "ENGRAM_API_KEY" in missing.stderr
    wrong = run_cli("mcp", "--data-dir", data_dir, cwd=workdir, env=cli_env(ENGRAM_API_KEY="egm_" + "x" * 43))
    assert wrong.returncode == 5, wrong.stderr


async def test_streamable_http_needs_a_key_and_keeps_tenants_apart(data_dir: Path, workdir: Path, serve: Any) -> None:
    server = serve(data_dir)
    agent = create_key(data_dir, workdir, "acme", role="agent")
    reviewer = create_key(data_dir, workdir, "acme", role="reviewer")
    globex = create_key(data_dir, workdir, "globex", role="admin")
    async with over_http(server.url, agent) as client:
        await check_the_tools(client)
    post = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    anonymous = httpx.post(f"{server.url}/mcp", json=post, headers=headers, timeout=10)
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "unauthenticated"
    forged = httpx.post(f"{server.url}/mcp", json=post, headers={**headers, "Authorization": "Bearer egm_nope"})
    assert forged.status_code == 401
    async with over_http(server.url, globex) as other:
        seen = data(await other.call_tool("list", {}))
        assert seen["items"] == []
        found = data(await other.call_tool("recall", {"query": "which currency do invoices use?"}))
        assert found["items"] == []
    async with over_http(server.url, reviewer) as client:
        mine = data(await client.call_tool("list", {"fact_key": "invoice.currency"}))
        certificate = data(await client.call_tool("forget", {"memory_id": mine["items"][0]["id"]}))
        assert certificate["tenant_id"] == "acme"
