"""PII detection figures for `engram eval policy`: recall per kind on tests/corpora/pii.jsonl (a value counts
as found when finds cover all of it, so masking would leave none of it in the text), and false positives on
tests/corpora/pii_benign.jsonl (look-alikes: order numbers, versions, places named like people)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from engram.policy import names
from engram.policy.pii import STRUCTURED, Found, find_structured, merge


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def detect(texts: list[str]) -> list[list[Found]]:
    people = names.find_names(texts)
    return [merge(find_structured(t), p) for t, p in zip(texts, people, strict=True)]


def _covered(text: str, value: str, found: list[Found], kind: str | None) -> bool:
    start = text.find(value)
    covered = [False] * len(value)
    for f in found:
        if kind is None or f.kind == kind:
            for i in range(max(f.start, start), min(f.end, start + len(value))):
                covered[i - start] = True
    # Spaces and punctuation around a value's parts (a card's dashes) may stay.
    return all(c or not value[i].isalnum() for i, c in enumerate(covered))


def evaluate(corpora: Path) -> dict[str, Any]:
    samples = _read(corpora / "pii.jsonl")
    benign = [s["text"] for s in _read(corpora / "pii_benign.jsonl")]
    found = detect([s["text"] for s in samples])
    total: Counter[str] = Counter()
    hit: Counter[str] = Counter()
    same_kind: Counter[str] = Counter()
    missed: list[str] = []
    for sample, finds in zip(samples, found, strict=True):
        for gold in sample["pii"]:
            kind = gold["kind"]
            total[kind] += 1
            if _covered(sample["text"], gold["value"], finds, None):
                hit[kind] += 1
            else:
                missed.append(f"{kind}: {gold['value']}")
            same_kind[kind] += _covered(sample["text"], gold["value"], finds, kind)
    flagged = [(t, sorted({f"{f.kind}:{f.value}" for f in fs})) for t, fs in zip(benign, detect(benign), strict=True)]
    flagged = [f for f in flagged if f[1]]
    structured = sum(total[k] for k in STRUCTURED)
    ner = names.available()
    return {
        "pii_samples": sum(total.values()),
        "pii_recall": round(sum(hit[k] for k in STRUCTURED) / structured, 4) if structured else None,
        "pii_recall_person": round(hit["person"] / total["person"], 4) if ner and total["person"] else None,
        "pii_recall_by_kind": {k: round(hit[k] / total[k], 4) for k in sorted(total)},
        "pii_recall_same_kind": {k: round(same_kind[k] / total[k], 4) for k in sorted(total)},
        "pii_missed": missed,
        "pii_benign_samples": len(benign),
        "pii_false_positive_rate": round(len(flagged) / len(benign), 4) if benign else None,
        "pii_false_positives": flagged,
        "ner_model": names.MODEL if ner else None,
    }
