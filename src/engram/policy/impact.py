"""High impact: memories that could do harm if wrong, and so wait for a reviewer unless a trusted source
wrote them (SPEC 4.5): visibility ``system``, importance above the tenant's bar, and these categories."""

from __future__ import annotations

import re

_I = re.IGNORECASE
CATEGORIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (code, re.compile(pattern, _I))
    for code, pattern in (
        (
            "payment_instructions",
            r"\b(?:pay|wire|transfer|send|remit)\b.{0,60}\b(?:to|into)\b.{0,40}\b(?:account|iban|bank|wallet|paypal|routing|sort\s+code)\b"
            r"|\b(?:new|updated|changed|different)\s+(?:bank|payment|remittance|billing)\s+(?:details|account|instructions|information)\b",
        ),
        (
            "bank_details",
            r"\b(?:iban|swift|bic|routing\s+(?:number|no)|sort\s+code|account\s+(?:number|no))\b\s*[:#]?\s*[A-Z0-9][A-Z0-9 -]{5,}",
        ),
        (
            "medical_details",
            r"\b(?:diagnosed|diagnosis|prescribed|prescription|medication|dosage|allergic\s+to|allergy|chemotherapy|hiv|"
            r"diabetes|diabetic|epilep\w+|pregnan\w+|depression|bipolar|schizophreni\w+|cancer|surgery|mg\s+(?:daily|twice))\b",
        ),
        (
            "permission_change",
            r"\b(?:grant|give|revoke|remove|elevate|promote|add)\b.{0,40}\b(?:admin|administrator|root|superuser|owner|"
            r"write|sudo)\s*(?:access|rights|role|permissions?|privileges?)\b"
            r"|\b(?:is|as)\s+(?:now\s+)?(?:an?\s+)?(?:admin|administrator|superuser)\b(?=.{0,40}\b(?:access|allowed|permission))",
        ),
    )
)


def categories(text: str) -> list[str]:
    return [code for code, pattern in CATEGORIES if pattern.search(text)]
