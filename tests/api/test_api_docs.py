"""/docs and /redoc work offline: every script, style sheet and icon they load is served by Engram itself
from an installed package, none from a CDN."""

from __future__ import annotations

import re

import httpx
import pytest

from engram import Engram
from engram.api import create_app


@pytest.mark.parametrize(("page", "assets"), [("/docs", 3), ("/redoc", 2)])
async def test_docs_pages_load_only_local_assets(engram: Engram, page: str, assets: int) -> None:
    app = create_app(engram, run_worker=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://engram.test") as anon:
        r = await anon.get(page)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        loaded = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", r.text)
        loaded += re.findall(r"""(?:url|spec-url)\s*[:=]\s*['"]([^'"]+)['"]""", r.text)
        assert not [u for u in loaded if "//" in u], f"{page} loads from elsewhere: {loaded}"
        local = sorted({u for u in loaded if u.startswith("/static/docs/")})
        assert len(local) == assets, loaded
        assert "/openapi.json" in r.text
        for url in local:
            got = await anon.get(url)
            assert got.status_code == 200 and len(got.content) > 1000, url
            kind = {"js": "javascript", "css": "text/css", "png": "image/png"}[url.rsplit(".", 1)[1]]
            assert kind in got.headers["content-type"], (url, got.headers["content-type"])
        spec = await anon.get("/openapi.json")
        assert spec.status_code == 200 and "/v1/memories" in spec.json()["paths"]
        assert "/static/docs" not in str(spec.json()["paths"])  # the assets are not API routes
