"""GET /metrics: Prometheus's text format, unauthenticated like most scrape targets (no label names a tenant,
a user or a query; ``ENGRAM_METRICS=false`` leaves the route out)."""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, Depends, Response
from prometheus_client import CONTENT_TYPE_LATEST

from engram.api.auth import get_engram
from engram.errors import EngramError
from engram.observability import metrics
from engram.service import Engram

router = APIRouter()
EngramDep = Annotated[Engram, Depends(get_engram)]
_log = logging.getLogger(__name__)


@router.get("/metrics", tags=["ops"], response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
async def metrics_page(engram: EngramDep) -> Response:
    """Request, write, recall and embedding latencies, candidates per retriever, degraded and empty recalls,
    and the background queues' depth and oldest age (read from the database now)."""
    try:
        metrics.observe_queues(await engram.queue_stats())
    except EngramError as exc:  # the latencies still help while the database is away
        _log.warning("queue statistics unavailable for /metrics: %s", exc)
    return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
