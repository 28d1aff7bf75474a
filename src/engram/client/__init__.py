"""A client of the Engram REST API: :class:`Client` (blocking) and :class:`AsyncClient`, over httpx.

>>> with Client("http://127.0.0.1:8420", api_key="egm_...") as engram:      # doctest: +SKIP
...     engram.remember("Invoices go out in EUR", kind="semantic", fact_key="invoice_currency")
...     engram.recall("which currency do invoices use?").packet

Answers are the library's models (``engram.model``); errors are the library's exceptions (``engram.errors``:
``ValidationError`` with its field, ``RevisionConflict`` with the current revision ...). 429 and 503 are tried
again after the server's Retry-After; a lost connection is tried again only for requests that are safe to
resend (reads, PUT, DELETE, and writes with an ``external_id`` or ``idempotency_key``). docs/client.md.
"""

from engram.client._clients import AsyncClient, Client
from engram.client._http import Call, Retry
from engram.client._ops import ROUTES

__all__ = ["ROUTES", "AsyncClient", "Call", "Client", "Retry"]
