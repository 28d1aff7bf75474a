"""all-MiniLM-L6-v2 through ONNX Runtime: the same weights, exported once from the installed model to a
local cache file, then run without PyTorch's per-call overhead (a one-line query embeds several times
faster on a small CPU). The vectors match sentence-transformers' to about 1e-7.

The exported graph is rewritten with ONNX Runtime's BERT fusions (``fuse``): about 500 small operators
become 46 (one attention operator per layer), which a one-line query's time is mostly made of.

The pipeline is the model's own: its tokenizer (truncation at its max_seq_length), the transformer, mean
pooling over the attention mask, unit length.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

_log = logging.getLogger(__name__)

EXPORT_VERSION = "2"  # bump when the export below changes, so cached files are rebuilt


def model_fingerprint(model_dir: Path) -> str:
    """A short hash of the model's weight and config files (names, sizes and modification times)."""
    h = hashlib.sha256(EXPORT_VERSION.encode())
    for path in sorted(model_dir.rglob("*")):
        if path.is_file() and path.suffix in {".safetensors", ".bin", ".json", ".txt"}:
            stat = path.stat()
            h.update(f"{path.relative_to(model_dir)}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    return h.hexdigest()[:16]


def export(st_model: Any, target: Path) -> None:
    """Export the transformer of a loaded SentenceTransformer to ``target`` (atomically), fused (``fuse``)."""
    import torch
    from torch.jit import TracerWarning  # type: ignore[attr-defined]

    inner = st_model[0].auto_model.eval()
    attention = getattr(inner.config, "_attn_implementation", None)
    switch = getattr(inner, "set_attn_implementation", None)

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    sample = st_model.tokenizer(["an example sentence"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".onnx.tmp")
    os.close(fd)
    try:
        # Traced through the eager attention: its operators are the pattern the attention fusion matches
        # (scaled_dot_product_attention's are not). A transformers too old to switch is traced as it is.
        if switch is not None:
            switch("eager")
        # The tracer warns that Python values in the model's code become constants (shapes, checks): true, and
        # harmless for this graph, which ``verify`` then proves on inputs of other lengths and batch sizes.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore", TracerWarning)
            # dynamo=False on purpose: the newer exporter needs onnxscript, which is not installed.
            warnings.filterwarnings("ignore", message=r"You are using the legacy TorchScript-based ONNX export")
            # The exporter's notes on itself (deprecations; "negative indices would give incorrect results": the
            # indices here are not negative, and ``verify`` checks the result).
            warnings.filterwarnings("ignore", category=UserWarning, module=r"torch\.onnx")
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\.onnx")
            torch.onnx.export(
                LastHiddenState(),
                tuple(sample[n] for n in names),
                tmp,
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
                opset_version=17,
                dynamo=False,
            )
        try:
            fuse(Path(tmp), heads=inner.config.num_attention_heads, hidden=inner.config.hidden_size)
        except Exception as exc:  # the plain graph computes the same, more slowly
            _log.warning("ONNX Runtime's fusions failed, the plain graph is used: %s", exc)
        os.replace(tmp, target)  # another process may have written the same file: either copy is right
    finally:
        if switch is not None and attention is not None:
            switch(attention)
        if os.path.exists(tmp):
            os.unlink(tmp)


def fuse(path: Path, *, heads: int, hidden: int) -> None:
    """Rewrite the graph at ``path`` with ONNX Runtime's BERT fusions (embedding and skip layer norms,
    attention, bias GELU), in place. The fused operators compute the same functions (``verify`` checks the
    result); ONNX Runtime's own graph optimizations still run when the session loads it."""
    from onnxruntime.transformers.optimizer import optimize_model

    optimize_model(str(path), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=0).save_model_to_file(
        str(path)
    )


# Sentences of other lengths than the export's sample, and a batch with padding: what the trace could get wrong.
_PROBES = [
    "ok",
    "The invoice for March was sent in EUR to the Berlin office after the customer asked twice.",
    "Refunds over 500 dollars need a second approval; " * 6,
]


def verify(encoder: OnnxEncoder, st_model: Any, tolerance: float = 1e-4) -> None:
    """Raise ValueError unless the exported graph embeds like the model it came from."""
    expected = np.asarray(st_model.encode(_PROBES, normalize_embeddings=True, show_progress_bar=False))
    got = encoder.encode(_PROBES)
    got = got / np.linalg.norm(got, axis=1, keepdims=True)
    worst = float(np.abs(expected - got).max())
    if not worst <= tolerance:
        raise ValueError(f"the exported ONNX graph differs from the model by {worst:.2e} (> {tolerance:.0e})")


class OnnxEncoder:
    """Tokenizer + ONNX session + mean pooling + unit length, in batches sorted by length."""

    def __init__(self, path: Path, tokenizer: Any, max_length: int, batch_size: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3
        # Idle threads sleep instead of spinning: the database and the event loop share these cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = tokenizer
        self._max_length = max_length
        self._batch_size = batch_size

    def encode(self, texts: list[str]) -> np.ndarray[Any, Any]:
        """Mean-pooled vectors in the order of ``texts`` (the caller scales them to unit length)."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # similar lengths pad less
        chunks = []
        for start in range(0, len(order), self._batch_size):
            enc = self._tokenizer(
                [texts[i] for i in order[start : start + self._batch_size]],
                padding=True, truncation=True, max_length=self._max_length, return_tensors="np",
            )  # fmt: skip
            feed = {k: np.asarray(v, dtype=np.int64) for k, v in enc.items() if k in self._inputs}
            hidden = self._session.run(None, feed)[0]
            mask = np.asarray(enc["attention_mask"], dtype=np.float32)[..., None]
            chunks.append((hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None))
        if not chunks:
            return np.zeros((0, 0), dtype=np.float32)
        pooled = np.concatenate(chunks)
        out = np.empty_like(pooled)
        out[order] = pooled
        return out
