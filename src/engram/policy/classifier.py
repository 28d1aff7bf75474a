"""A small injection classifier over the memory's own MiniLM vector: logistic regression, 384 weights and a
bias, shipped in injection_classifier.json. It adds recall where the rules (``injection/``) miss an
instruction phrased in a way they do not know, at a threshold chosen for a false-positive rate of at most
0.5% on the people's turns and agents' memories among its training negatives. It runs only when the write's
vector comes from the model it was trained on, after admission's rules and redaction (the vector is the one
stored). Nothing downloads.

Trained by ``python -m engram.policy.classifier CORPORA SUBSET60``. Positives: tests/corpora/attacks.txt and
a few thousand attacks generated from templates across the injection families (``attack_templates.py``),
alone and inside ordinary text, in eight languages. Negatives: every user turn of LongMemEval's tuning file
(``longmemeval_s_cleaned_subset60.json``), tests/corpora/benign.txt, generated benign look-alikes and
generated memories of the kinds agents keep (``memory_templates.py``: procedures, standing instructions,
contact preferences, which are imperative and speak of sending and replying as attacks do). Each text also
as stored with its personal data masked (placeholders such as PERSON_C), as most tenants store it. Never
trained on attacks_holdout.txt, LoCoMo or the LongMemEval validation split, which ``engram eval policy``
measures it on.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

WEIGHTS = Path(__file__).with_name("injection_classifier.json")
L2 = 1e-3
STEPS = 3000
GENERATED_ATTACKS = 3000
GENERATED_LOOK_ALIKES = 800
AGENT_MEMORIES = 3000


@dataclass(frozen=True)
class InjectionClassifier:
    model_id: str
    weights: np.ndarray[Any, np.dtype[np.float32]]
    bias: float
    threshold: float

    def score(self, vector: Any) -> float:
        v = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(v)) or 1.0
        return float(v @ self.weights / norm + self.bias)

    def flags(self, vector: Any) -> bool:
        return self.score(vector) > self.threshold


@cache
def classifier() -> InjectionClassifier | None:
    """The shipped classifier, or None when its file is absent."""
    if not WEIGHTS.exists():
        return None
    data = json.loads(WEIGHTS.read_text())
    return InjectionClassifier(
        model_id=data["model_id"],
        weights=np.asarray(data["weights"], dtype=np.float32),
        bias=float(data["bias"]),
        threshold=float(data["threshold"]),
    )


def train(
    positives: np.ndarray[Any, Any],
    negatives: np.ndarray[Any, Any],
    *,
    false_positive_rate: float = 0.005,
    calibration: np.ndarray[Any, Any] | None = None,
    l2: float = L2,
    steps: int = STEPS,
) -> tuple[np.ndarray[Any, Any], float, float]:
    """Weights, bias and threshold: class-weighted logistic regression by gradient descent. The threshold
    flags ``false_positive_rate`` of ``calibration`` (the negatives by default): text written by people, not
    the look-alikes written to be hard."""
    x = np.vstack([positives, negatives]).astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.r_[np.ones(len(positives)), np.zeros(len(negatives))]
    class_weight = np.where(y == 1, len(negatives) / len(positives), 1.0)
    w = np.zeros(x.shape[1])
    b = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = (p - y) * class_weight
        w -= 0.5 * (x.T @ g / len(y) + l2 * w)
        b -= 0.5 * float(g.mean())
    held = x[len(positives) :] if calibration is None else np.asarray(calibration, dtype=np.float64)
    held = held / np.linalg.norm(held, axis=1, keepdims=True)
    threshold = float(np.quantile(held @ w + b, 1 - false_positive_rate))
    return w, b, threshold


def _main(corpora: Path, subset60: Path) -> None:  # pragma: no cover - run by hand when the corpora change
    from engram.evaluation.policy import lines
    from engram.policy.attack_templates import attacks, benign_look_alikes
    from engram.policy.memory_templates import agent_memories
    from engram.policy.pii import masked_texts
    from engram.providers.local import MODEL_ID, LocalMiniLM

    sessions = json.loads(subset60.read_text())
    turns = list(
        dict.fromkeys(
            t["content"][:2000]
            for instance in sessions
            for session in instance["haystack_sessions"]
            for t in session
            if t["role"] == "user" and t["content"].strip()
        )
    )
    random.Random(1).shuffle(turns)  # noqa: S311 - a reproducible order, not a secret
    model = LocalMiniLM()
    model.load()
    # Alone: wrapped in ordinary text they taught the classifier that text more than the attack (it flagged
    # more look-alikes and no more attacks on a hand-written development set).
    attack_texts = lines(corpora / "attacks.txt") + attacks(GENERATED_ATTACKS, in_context=0.0)
    look_alike_texts = lines(corpora / "benign.txt") + benign_look_alikes(GENERATED_LOOK_ALIKES)

    # Every text also as a tenant that masks personal data stores it (PERSON_C, EMAIL_17): the classifier
    # screens that vector, and placeholders it never saw in people's text read to it as template slots.
    def both(texts: list[str], seed: int) -> list[str]:
        masked = masked_texts(texts, seed=seed)
        return texts + [m for t, m in zip(texts, masked, strict=True) if m != t]

    positives = np.asarray(model.encode_sync(both(attack_texts, 1)))
    people = np.asarray(model.encode_sync(both(turns, 2)))
    look_alikes = np.asarray(model.encode_sync(both(look_alike_texts, 3)))
    memories = np.asarray(model.encode_sync(both(agent_memories(AGENT_MEMORIES), 4)))
    # The threshold holds the false-positive rate on what people and agents write, not on the look-alikes.
    w, b, threshold = train(
        positives, np.vstack([people, look_alikes, memories]), calibration=np.vstack([people, memories])
    )
    WEIGHTS.write_text(
        json.dumps(
            {
                "model_id": MODEL_ID,
                "trained_on": {
                    "positives": len(positives),
                    "negatives": len(people) + len(look_alikes) + len(memories),
                    "false_positive_rate": 0.005,
                    "calibrated_on": "LongMemEval subset60 user turns and generated agent memories, as written and "
                    "masked",
                },
                "weights": [round(float(v), 6) for v in w],
                "bias": round(b, 6),
                "threshold": round(threshold, 6),
            }
        )
        + "\n"
    )
    print(f"wrote {WEIGHTS} (threshold {threshold:.4f})")


if __name__ == "__main__":  # pragma: no cover
    _main(Path(sys.argv[1]), Path(sys.argv[2]))
