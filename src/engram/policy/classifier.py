"""A small injection classifier over the memory's own MiniLM vector: logistic regression, 384 weights and a
bias, shipped in injection_classifier.json. It adds recall where the rules (``injection.py``) miss an
instruction phrased in a way they do not know, at a threshold chosen for a false-positive rate of at most
0.5% on its training negatives. It runs only when the write's vector comes from the model it was trained
on, after admission's rules and redaction (the vector is the one stored). Nothing downloads.

Trained by ``python -m engram.policy.classifier CORPORA SUBSET60`` on tests/corpora/attacks.txt (the
positives) and on tests/corpora/benign.txt with the user turns of LongMemEval's tuning file (the
negatives); never on attacks_holdout.txt, LoCoMo or the LongMemEval validation split, which
``engram eval policy`` measures it on.
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
    positives: np.ndarray[Any, Any], negatives: np.ndarray[Any, Any], *, false_positive_rate: float = 0.005
) -> tuple[np.ndarray[Any, Any], float, float]:
    """Weights, bias and threshold: class-weighted logistic regression by gradient descent, L2 1e-3."""
    x = np.vstack([positives, negatives]).astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.r_[np.ones(len(positives)), np.zeros(len(negatives))]
    class_weight = np.where(y == 1, len(negatives) / len(positives), 1.0)
    w = np.zeros(x.shape[1])
    b = 0.0
    for _ in range(3000):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = (p - y) * class_weight
        w -= 0.5 * (x.T @ g / len(y) + 1e-3 * w)
        b -= 0.5 * float(g.mean())
    negative_scores = x[len(positives) :] @ w + b
    threshold = float(np.quantile(negative_scores, 1 - false_positive_rate))
    return w, b, threshold


def _main(corpora: Path, subset60: Path) -> None:  # pragma: no cover - run by hand when the corpora change
    from engram.evaluation.policy import lines
    from engram.providers.local import MODEL_ID, LocalMiniLM

    sessions = json.loads(subset60.read_text())
    turns = [
        t["content"][:2000]
        for instance in sessions
        for session in instance["haystack_sessions"]
        for t in session
        if t["role"] == "user" and t["content"].strip()
    ]
    random.Random(1).shuffle(turns)  # noqa: S311 - a reproducible sample, not a secret
    model = LocalMiniLM()
    model.load()
    positives = np.asarray(model.encode_sync(lines(corpora / "attacks.txt")))
    negatives = np.asarray(model.encode_sync(turns[:4000] + lines(corpora / "benign.txt")))
    w, b, threshold = train(positives, negatives)
    WEIGHTS.write_text(
        json.dumps(
            {
                "model_id": MODEL_ID,
                "trained_on": {"positives": len(positives), "negatives": len(negatives), "false_positive_rate": 0.005},
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
