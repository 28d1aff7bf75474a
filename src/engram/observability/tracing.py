"""OpenTelemetry traces, when configured (``ENGRAM_OTEL_ENDPOINT``, or the standard
``OTEL_EXPORTER_OTLP_ENDPOINT``): a server span per HTTP request (continuing the caller's ``traceparent``),
with spans for writes, recalls and embedding calls inside it. Unconfigured, every span is OpenTelemetry's
no-op and costs next to nothing. The SDK and the OTLP exporter are the ``otel`` extra
(``pip install 'engram-memory[otel]'``)."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from opentelemetry import trace

if TYPE_CHECKING:
    from engram.config import Settings

_log = logging.getLogger(__name__)
_provider: trace.TracerProvider | None = None  # set by ``use`` (tests) or ``configure``; else the global one


def tracer() -> trace.Tracer:
    return trace.get_tracer("engram", tracer_provider=_provider)


def use(provider: trace.TracerProvider | None) -> None:
    """Send Engram's spans to ``provider`` (None: the global provider again)."""
    global _provider
    _provider = provider


def configure(settings: Settings) -> bool:
    """Export spans over OTLP/HTTP when an endpoint is configured; True when tracing is on."""
    endpoint = settings.otel_endpoint or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if not endpoint:
        return False
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        _log.warning(
            "tracing is configured (%s) but the OpenTelemetry SDK is not installed: pip install "
            "'engram-memory[otel]'; running without traces",
            endpoint,
        )
        return False
    provider = TracerProvider(resource=Resource.create({"service.name": settings.otel_service_name}))
    url = endpoint if endpoint.rstrip("/").endswith("/v1/traces") else endpoint.rstrip("/") + "/v1/traces"
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    trace.set_tracer_provider(provider)
    use(provider)
    _log.info("tracing to %s as %s", url, settings.otel_service_name)
    return True
