"""`engram eval longmemeval`: LongMemEval (S subset) under the official retrieval rules
(benchmarks/longmemeval/README.md): only user turns are indexed; an id is relevant if it contains
"answer" and (for turns) carries has_answer; `_abs` questions and questions without a has_answer user turn
are skipped. Session-level figures map the turn ranking to sessions with the official effective-k rule.

Each question is its own tenant; each user turn is one episodic memory with session_id = the haystack
session, valid_from = the session date (+ the turn index in milliseconds).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from engram.errors import ValidationError
from engram.evaluation.metrics import all_at, any_at, mean, percentile
from engram.evaluation.runner import settle, timed_recall, write_transcript
from engram.retrieval.config import RetrievalConfig
from engram.service import Engram

KS = (1, 3, 5, 10)
DEPTH = 100  # turns retrieved per question; enough for the effective-k session mapping at k <= 10


def parse_date(text: str) -> datetime:
    """'2023/05/30 (Tue) 23:40' -> aware datetime (UTC)."""
    return datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", text).strip(), "%Y/%m/%d %H:%M").replace(tzinfo=UTC)


def load(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise ValidationError(
            f"LongMemEval data not found at {path}; pass --data PATH/longmemeval_s_cleaned_subset60.json", field="data"
        )
    data: list[dict[str, Any]] = json.loads(path.read_text())
    return data


def turn_ids(instance: dict[str, Any]) -> list[tuple[str, str, int, dict[str, Any], str]]:
    """(official turn id, session id, turn index, turn, date) for every user turn, in haystack order."""
    out = []
    for sid, session, date in zip(
        instance["haystack_session_ids"], instance["haystack_sessions"], instance["haystack_dates"], strict=True
    ):
        for i, turn in enumerate(session):
            if turn["role"] != "user":
                continue
            tid = f"{sid}_{i + 1}"
            if "answer" in sid and not turn.get("has_answer"):
                tid = tid.replace("answer", "noans")
            out.append((tid, sid, i, turn, date))
    return out


def scored(instance: dict[str, Any]) -> bool:
    return not str(instance["question_id"]).endswith("_abs") and any("answer" in t[0] for t in turn_ids(instance))


async def ingest(engram: Engram, decisions: Counter[str], instance: dict[str, Any]) -> dict[str, str]:
    tenant = "lme-" + str(instance["question_id"])
    by_memory: dict[str, str] = {}
    turns = turn_ids(instance)
    sessions: dict[str, list[tuple[str, str, int, dict[str, Any], str]]] = {}
    for t in turns:
        sessions.setdefault(t[1], []).append(t)
    batch: list[dict[str, Any]] = []
    for sid, rows in sessions.items():
        start = parse_date(rows[0][4])
        for tid, _, i, turn, _ in rows:
            if not turn["content"].strip():
                continue  # an empty turn cannot be a memory (and holds no evidence)
            batch.append(
                {
                    "content": turn["content"][:12000],
                    "kind": "episodic",
                    "session_id": sid,
                    "valid_from": (start + timedelta(milliseconds=i)).isoformat(),
                    "external_id": tid,
                    "metadata": {"session": sid, "turn": i + 1},
                    "source": {"type": "user_message", "ref": f"longmemeval:{instance['question_id']}/{tid}"},
                }
            )
    for at in range(0, len(batch), 500):
        chunk = batch[at : at + 500]
        by_memory.update(await write_transcript(engram, tenant, chunk, decisions))
    return by_memory


def _session(turn_id: str) -> str:
    return turn_id.rsplit("_", 1)[0]


def _effective(ranked_sessions: list[str], k: int) -> int:
    """The official turn->session rule: grow k until the top holds k distinct sessions."""
    ek = k
    while ek < len(ranked_sessions) and len(set(ranked_sessions[:ek])) < k:
        ek += 1
    return ek


def _dcg(rel: list[int]) -> float:
    return sum(r / math.log2(i + 1) for i, r in enumerate(rel, start=1))


def _metrics(ranked: list[str], gold: set[str], *, corpus_relevant: int, sessions: bool) -> dict[str, float]:
    """Official metrics. For sessions, ``ranked`` is the turn ranking mapped to session ids (with repeats),
    cut at the effective k; nDCG counts repeats as upstream does, against every relevant turn in the corpus."""
    out: dict[str, float] = {}
    for k in KS:
        ek = _effective(ranked, k) if sessions else k
        top = ranked[:ek]
        out[f"recall_any@{k}"] = any_at(top, gold, ek)
        out[f"recall_all@{k}"] = all_at(top, gold, ek)
        ideal = _dcg([1] * min(corpus_relevant, ek))
        out[f"ndcg_any@{k}"] = _dcg([1 if r in gold else 0 for r in top]) / ideal if ideal else 0.0
    return out


async def evaluate(
    engram: Engram, data: list[dict[str, Any]], preset: str, *, config: RetrievalConfig | None = None,
    limit: int | None = None,
) -> dict[str, Any]:  # fmt: skip
    session_rows: list[dict[str, float]] = []
    turn_rows: list[dict[str, float]] = []
    latencies: list[float] = []
    decisions: Counter[str] = Counter()
    engram.retriever.clear_query_cache()  # each preset's latency includes its queries' embedding
    for instance in data[:limit]:
        if not scored(instance):
            continue
        by_memory = await ingest(engram, decisions, instance)
        await settle(engram)
        tenant = "lme-" + str(instance["question_id"])
        result, ms = await timed_recall(
            engram, str(instance["question"]), tenant=tenant, preset=preset, k=DEPTH, config=config
        )
        latencies.append(ms)
        ranked_turns = [by_memory.get(str(i.id), "") for i in result.items]
        all_turns = [t[0] for t in turn_ids(instance)]
        gold_turns = {t for t in all_turns if "answer" in t}
        gold_sessions = {_session(t) for t in gold_turns}
        turn_rows.append(_metrics(ranked_turns, gold_turns, corpus_relevant=len(gold_turns), sessions=False))
        session_rows.append(
            _metrics(
                [_session(t) for t in ranked_turns],
                gold_sessions,
                corpus_relevant=sum(1 for t in all_turns if _session(t) in gold_sessions),
                sessions=True,
            )
        )

    def avg(rows: list[dict[str, float]]) -> dict[str, float]:
        return {key: round(mean([r[key] for r in rows]), 4) for key in (rows[0] if rows else {})}

    return {
        "benchmark": "longmemeval",
        "preset": preset,
        "admission": dict(sorted(decisions.items())),
        "level": "session",
        "questions": len(session_rows),
        **avg(session_rows),
        "turn": {"questions": len(turn_rows), **avg(turn_rows)},
        "latency_ms": {"p50": round(percentile(latencies, 50), 2), "p95": round(percentile(latencies, 95), 2)},
    }
