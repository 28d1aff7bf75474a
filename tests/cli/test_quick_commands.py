"""The quick commands through a running server: found through the data directory's server.json, or named by
ENGRAM_URL and ENGRAM_API_KEY; and the local token's rules on the server's side."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx

from engram import discovery
from tests.cli.conftest import cli_env, create_key, run_cli


def access_lines(server: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in server.stderr.splitlines() if line.startswith("{") and '"path"' in line]


def test_commands_find_the_local_server_and_act_as_the_cli(data_dir: Path, workdir: Path, serve: Any) -> None:
    server = serve(data_dir)
    found = discovery.read(data_dir)
    assert found is not None and found.url == server.url and found.token.startswith("egl_")
    assert (data_dir / "server.json").stat().st_mode & 0o777 == 0o600
    wrote = run_cli("remember", "The deploy window is Tuesday 14:00 UTC", "-t", "acme", "--data-dir", data_dir,
                    cwd=workdir)  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    memory_id = json.loads(wrote.stdout)["id"]
    started = time.monotonic()
    recalled = run_cli("recall", "when can we deploy", "-t", "acme", "--json", "--data-dir", data_dir, cwd=workdir)
    took = time.monotonic() - started
    assert recalled.returncode == 0 and json.loads(recalled.stdout)["items"][0]["id"] == memory_id
    assert took < 5, f"a recall through the server took {took:.1f} s"
    paths = [(line["method"], line["path"]) for line in access_lines(server)]
    assert ("POST", "/v1/memories") in paths and ("POST", "/v1/recall") in paths, paths
    history = server.client().get(f"/v1/memories/{memory_id}/history")
    assert history.status_code == 401  # the server answers only keys ...
    shown = run_cli("get", memory_id, "-t", "acme", "--data-dir", data_dir, cwd=workdir)
    assert json.loads(shown.stdout)["id"] == memory_id
    other = run_cli("get", memory_id, "-t", "globex", "--data-dir", data_dir, cwd=workdir)
    assert other.returncode == 3, other.stderr  # ... and the tenant named: another one does not see it
    missing = run_cli("list", "--data-dir", data_dir, cwd=workdir)
    assert missing.returncode == 2 and "--tenant" in missing.stderr


def test_the_local_token_needs_its_tenant_and_is_the_servers_own(data_dir: Path, workdir: Path, serve: Any) -> None:
    server = serve(data_dir)
    token = discovery.read(data_dir).token  # type: ignore[union-attr]
    with httpx.Client(base_url=server.url, timeout=10) as http:
        no_tenant = http.get("/v1/memories", headers={"Authorization": f"Bearer {token}"})
        assert no_tenant.status_code == 422 and no_tenant.json()["error"]["field"] == discovery.TENANT_HEADER
        forged = http.get(
            "/v1/memories", headers={"Authorization": "Bearer egl_forged", discovery.TENANT_HEADER: "acme"}
        )
        assert forged.status_code == 401
        ok = http.get("/v1/memories", headers={"Authorization": f"Bearer {token}", discovery.TENANT_HEADER: "acme"})
        assert ok.status_code == 200, ok.text
    server.signal(15)
    assert not (data_dir / "server.json").exists(), "serve removes its file when it stops"


def test_an_api_key_names_the_tenant(data_dir: Path, workdir: Path, serve: Any) -> None:
    server = serve(data_dir)
    key = create_key(data_dir, workdir, "acme", role="agent")
    env = cli_env(ENGRAM_URL=server.url, ENGRAM_API_KEY=key)
    wrote = run_cli("remember", "Refunds go through the finance lead", "--data-dir", data_dir, cwd=workdir, env=env)
    assert wrote.returncode == 0, wrote.stderr
    listed = run_cli("list", "--json", "--data-dir", data_dir, cwd=workdir, env=env)
    assert [m["tenant_id"] for m in json.loads(listed.stdout)["items"]] == ["acme"]
    assert json.loads(listed.stdout)["items"][0]["source"]["type"] != ""
    wrong = run_cli("list", "-t", "globex", "--data-dir", data_dir, cwd=workdir, env=env)
    assert wrong.returncode == 5 and "acme" in wrong.stderr, wrong.stderr
    down = cli_env(ENGRAM_URL="http://127.0.0.1:9", ENGRAM_API_KEY=key)
    unreachable = run_cli("list", "--data-dir", data_dir, cwd=workdir, env=down)
    assert unreachable.returncode == 7 and "cannot reach Engram at http://127.0.0.1:9" in unreachable.stderr
