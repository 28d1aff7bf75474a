"""`engram eval locomo`: LoCoMo turn-level evidence recall (README of benchmarks/locomo for the rules).

Every turn is written as an episodic memory through the normal write path: one tenant per conversation,
session_id = the LoCoMo session, valid_from = the session's date (plus the turn index in milliseconds,
to keep turn order), metadata.speaker = the speaker, external_id = the dia_id (so re-runs are replays).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from engram.errors import ValidationError
from engram.evaluation.metrics import mean, ndcg_at, percentile, recall_at, reciprocal_rank
from engram.evaluation.runner import settle, timed_recall, write_transcript
from engram.retrieval.config import RetrievalConfig
from engram.service import Engram

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
TARGET_CATEGORIES = (1, 2, 3, 4)
KS = (1, 5, 10, 20)
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def parse_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> aware datetime (UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def evidence_ids(evidence: list[str], known: set[str]) -> list[str]:
    """Split on ';' and whitespace, parse D:?s:t as integers, drop what does not resolve."""
    out: list[str] = []
    for raw in evidence:
        for piece in re.split(r"[;\s]+", str(raw)):
            m = _EVIDENCE.fullmatch(piece.strip()) or _EVIDENCE.search(piece)
            if m:
                dia = f"D{int(m.group(1))}:{int(m.group(2))}"
                if dia in known and dia not in out:
                    out.append(dia)
    return out


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [photo: {turn['blip_caption']}]"
    return text


def load(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise ValidationError(f"LoCoMo data not found at {path}; pass --data PATH/locomo10.json", field="data")
    data: list[dict[str, Any]] = json.loads(path.read_text())
    return data


async def ingest(engram: Engram, decisions: Counter[str], sample: dict[str, Any]) -> dict[str, str]:
    """Write one conversation; returns memory id -> dia_id."""
    tenant = "locomo-" + sample["sample_id"]
    conv = sample["conversation"]
    sessions = sorted(
        (int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k)),
    )
    by_memory: dict[str, str] = {}
    for n in sessions:
        start = parse_date(conv[f"session_{n}_date_time"])
        items = [
            {
                "content": turn_text(turn),
                "kind": "episodic",
                "session_id": f"session_{n}",
                "valid_from": (start + timedelta(milliseconds=i)).isoformat(),
                "external_id": turn["dia_id"],
                "metadata": {"speaker": turn["speaker"], "dia_id": turn["dia_id"]},
                "source": {"type": "user_message", "ref": f"locomo:{sample['sample_id']}/{turn['dia_id']}"},
            }
            for i, turn in enumerate(conv[f"session_{n}"])
        ]
        by_memory.update(await write_transcript(engram, tenant, items, decisions))
    return by_memory


async def evaluate(
    engram: Engram, data: list[dict[str, Any]], preset: str, *, config: RetrievalConfig | None = None,
    limit: int | None = None,
) -> dict[str, Any]:  # fmt: skip
    per_q: list[dict[str, Any]] = []
    latencies: list[float] = []
    decisions: Counter[str] = Counter()
    questions: list[tuple[str, str]] = []  # (question, its conversation's tenant)
    engram.retriever.clear_query_cache()  # each preset's latency includes its queries' embedding
    for sample in data:
        by_memory = await ingest(engram, decisions, sample)
        await settle(engram)
        known = set(by_memory.values())
        tenant = "locomo-" + sample["sample_id"]
        for qa in sample["qa"][:limit]:
            gold = evidence_ids(qa.get("evidence", []), known)
            if not gold:
                continue
            result, ms = await timed_recall(
                engram, str(qa["question"]), tenant=tenant, preset=preset, k=max(KS), config=config
            )
            latencies.append(ms)
            ranked = [by_memory.get(str(i.id), "") for i in result.items]
            per_q.append({"category": int(qa["category"]), "ranked": ranked, "gold": gold, "abstain": result.abstain})
            if int(qa["category"]) in TARGET_CATEGORIES:
                questions.append((str(qa["question"]), tenant))
    foreign = await _ask_elsewhere(engram, questions, preset, config)
    return {
        **summarise(per_q, latencies, preset),
        "abstain_rate_foreign": round(mean(foreign), 4) if foreign else None,
        "admission": dict(sorted(decisions.items())),
    }


async def _ask_elsewhere(
    engram: Engram, questions: list[tuple[str, str]], preset: str, config: RetrievalConfig | None
) -> list[bool]:
    """Each question asked of the next conversation's tenant (other people, other events: nothing there
    answers it): whether recall abstained."""
    tenants = list(dict.fromkeys(t for _, t in questions))
    if len(tenants) < 2:
        return []
    following = {t: tenants[(i + 1) % len(tenants)] for i, t in enumerate(tenants)}
    out = []
    for question, tenant in questions:
        result, _ = await timed_recall(engram, question, tenant=following[tenant], preset=preset, k=max(KS),
                                       config=config)  # fmt: skip
        out.append(result.abstain)
    return out


def _scores(rows: list[dict[str, Any]]) -> dict[str, float]:
    out = {f"recall@{k}": mean([recall_at(r["ranked"], r["gold"], k) for r in rows]) for k in KS}
    out["mrr"] = mean([reciprocal_rank(r["ranked"], r["gold"]) for r in rows])
    out["ndcg@10"] = mean([ndcg_at(r["ranked"], r["gold"], 10) for r in rows])
    return {k: round(v, 4) for k, v in out.items()}


def summarise(per_q: list[dict[str, Any]], latencies: list[float], preset: str) -> dict[str, Any]:
    target = [r for r in per_q if r["category"] in TARGET_CATEGORIES]
    by_cat: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in per_q:
        by_cat[r["category"]].append(r)
    return {
        "benchmark": "locomo",
        "preset": preset,
        "level": "turn",
        "categories": list(TARGET_CATEGORIES),
        "questions": len(target),
        **_scores(target),
        "per_category": {
            f"{c}-{CATEGORIES[c]}": {"questions": len(rows), **_scores(rows)} for c, rows in sorted(by_cat.items())
        },
        "all_categories": {"questions": len(per_q), **_scores(per_q)},
        "abstain_rate_own": round(mean([r["abstain"] for r in target]), 4) if target else None,
        "latency_ms": {
            "p50": round(percentile(latencies, 50), 2),
            "p95": round(percentile(latencies, 95), 2),
            "mean": round(mean(latencies), 2),
        },
    }
