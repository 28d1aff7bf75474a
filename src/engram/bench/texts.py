"""Synthetic but realistic memory texts: preferences, incidents, decisions, procedures, tool results.

Deterministic for a seed, and unique per index so no two texts share a hash (nothing is skipped as a
duplicate, which would flatter write throughput).
"""

from __future__ import annotations

import random

_NAMES = ["Ana", "Bram", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jia", "Kofi", "Lena"]
_PRODUCTS = ["billing portal", "mobile app", "data export", "SSO login", "invoice API", "search index"]
_CURRENCIES = ["EUR", "USD", "GBP", "CHF", "JPY"]
_TEMPLATES = [
    "{name} prefers invoices in {cur} and wants a weekly summary of open tickets every {day}.",
    "Incident {n}: the {product} returned Error {code} for {name}'s team after the {day} deploy; "
    "rolled back within {mins} minutes.",
    "Decision ({day}): the {product} migration is postponed until the load test passes at {n} requests per second.",
    "To resolve a refund dispute for {name}: check invoice {n}, confirm payment status, read the refund policy, "
    "then draft a reply.",
    "Tool result: {product} health check reported {code} on node {n}; latency p95 was {mins} ms.",
    "{name} asked for the {product} contract renewal to be reviewed by legal before {day}; budget is {n} {cur}.",
    "Customer {name} reported that the {product} times out on uploads above {mins} MB (ticket {n}).",
    "Working note: step {mins} of the onboarding workflow for {name} is blocked on the {product} API key.",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def memory_texts(count: int, *, seed: int = 7, tag: str = "") -> list[str]:
    rng = random.Random(seed)
    texts = []
    for i in range(count):
        template = _TEMPLATES[rng.randrange(len(_TEMPLATES))]
        text = template.format(
            name=rng.choice(_NAMES),
            cur=rng.choice(_CURRENCIES),
            day=rng.choice(_DAYS),
            product=rng.choice(_PRODUCTS),
            code=rng.choice([500, 502, 503, 504, 429, 404]),
            n=rng.randrange(1000, 99999),
            mins=rng.randrange(2, 90),
        )
        texts.append(f"{text} [{tag}{i}]" if tag else f"{text} (ref {i})")
    return texts
