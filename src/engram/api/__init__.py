"""The REST API (FastAPI): app factory, routes, wire schemas, one exception -> status table."""

from engram.api.app import create_app

__all__ = ["create_app"]
