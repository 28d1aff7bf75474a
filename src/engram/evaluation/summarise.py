"""`engram eval summarise`: LoCoMo over condensed memories (SPEC 6.2) against LoCoMo over raw turns.

Each conversation is written twice. Raw: every turn a memory (``locomo.evaluate``, the baseline). Condensed:
in a tenant of its own, the turns are written and archived (the buffer's raw turns, kept for their links
and history but never recalled), and the extractive summariser's candidates are written through the whole
admission policy, each with a ``derived_from`` relation to its turn. A question counts a turn as retrieved
when a retrieved summary derives from it; recall@k is then computed as for raw turns, same preset, same run.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import timedelta
from typing import Any

from engram.errors import EngramError
from engram.evaluation import locomo
from engram.evaluation.metrics import mean, recall_at
from engram.evaluation.runner import settle, timed_recall, write_transcript
from engram.lifecycle.summarise import Turn, condense
from engram.service import Engram


async def evaluate(
    engram: Engram, data: list[dict[str, Any]], preset: str, *, limit: int | None = None
) -> dict[str, Any]:
    raw = await locomo.evaluate(engram, data, preset, limit=limit)
    rows: list[dict[str, Any]] = []
    chars = Counter[str]()
    counts = Counter[str]()
    for sample in data:
        tenant = "locomo-sum-" + sample["sample_id"]
        derived = await _condensed(engram, tenant, sample, chars, counts)
        await settle(engram)
        turns = _all_turns(sample)
        for qa in sample["qa"][:limit]:
            if int(qa["category"]) not in locomo.TARGET_CATEGORIES:
                continue
            gold = locomo.evidence_ids(qa.get("evidence", []), turns)
            if not gold:
                continue
            result, _ = await timed_recall(engram, str(qa["question"]), tenant=tenant, preset=preset, k=10)
            rows.append({"ranked": [derived.get(str(i.id), "") for i in result.items], "gold": gold})
    ks = (5, 10)
    return {
        "benchmark": "locomo-summarise",
        "preset": preset,
        "questions": len(rows),
        **{f"recall@{k}_summaries": round(mean([recall_at(r["ranked"], r["gold"], k) for r in rows]), 4) for k in ks},
        **{f"recall@{k}_raw": raw[f"recall@{k}"] for k in ks},
        "recall@10_ratio": round(
            mean([recall_at(r["ranked"], r["gold"], 10) for r in rows]) / raw["recall@10"], 4
        ) if raw["recall@10"] else None,
        "char_ratio": round(chars["summaries"] / chars["turns"], 4) if chars["turns"] else None,
        "chars": dict(chars),
        **dict(counts),
    }  # fmt: skip


def _all_turns(sample: dict[str, Any]) -> set[str]:
    conv = sample["conversation"]
    return {t["dia_id"] for k, v in conv.items() if re.fullmatch(r"session_\d+", k) for t in v}


async def _condensed(
    engram: Engram, tenant: str, sample: dict[str, Any], chars: Counter[str], counts: Counter[str]
) -> dict[str, str]:
    """Write the conversation's turns (archived) and their condensed memories; summary id -> dia_id."""
    conv = sample["conversation"]
    sessions = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    decisions: Counter[str] = Counter()
    derived: dict[str, str] = {}
    for n in sessions:
        start = locomo.parse_date(conv[f"session_{n}_date_time"])
        turns = conv[f"session_{n}"]
        items = [
            {
                "content": locomo.turn_text(turn), "kind": "episodic", "session_id": f"session_{n}",
                "valid_from": (start + timedelta(milliseconds=i)).isoformat(), "external_id": turn["dia_id"],
                "metadata": {"speaker": turn["speaker"], "dia_id": turn["dia_id"]},
                "source": {"type": "user_message", "ref": f"locomo:{sample['sample_id']}/{turn['dia_id']}"},
            }
            for i, turn in enumerate(turns)
        ]  # fmt: skip
        stored = await write_transcript(engram, tenant, items, decisions)  # memory id -> dia_id
        at = {dia: i for i, dia in enumerate(t["dia_id"] for t in turns)}
        by_dia = {dia: mid for mid, dia in stored.items()}
        chars["turns"] += sum(len(i["content"]) for i in items)
        condensed = condense(
            [Turn(ref=t["dia_id"], speaker=t["speaker"], text=locomo.turn_text(t).split(": ", 1)[1]) for t in turns]
        )
        for mid in stored:  # the raw turns leave recall; their links and history stay
            await engram.archive(mid, tenant=tenant, actor="eval")
        candidates: list[dict[str, Any]] = [
            {
                "content": c.content, "kind": "episodic", "subtype": "summary", "session_id": f"session_{n}",
                "valid_from": (start + timedelta(milliseconds=at[c.ref])).isoformat(),
                "external_id": f"summary:{c.ref}", "metadata": {"speaker": items[at[c.ref]]["metadata"]["speaker"],
                                                                "derived_from": c.ref},
                "source": {"type": "agent_inference", "ref": f"summary-of:{c.ref}"},
            }
            for c in condensed if c.ref in by_dia
        ]  # fmt: skip
        results = await engram.remember_many(candidates, tenant=tenant, actor="eval")
        for cand, r in zip(candidates, results, strict=True):
            if isinstance(r, EngramError):
                counts["summaries_refused"] += 1
                continue
            dia = str(cand["metadata"]["derived_from"])
            await engram.relate({"src_id": str(r.id), "dst_id": by_dia[dia], "type": "derived_from"}, tenant=tenant,
                                actor="eval")  # fmt: skip
            derived[str(r.id)] = dia
            chars["summaries"] += len(cand["content"])
        counts["turns"] += len(items)
        counts["summaries"] += len(candidates)
    return derived
