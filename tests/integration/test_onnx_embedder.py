"""The default local embedder runs through ONNX Runtime and gives the same vectors as PyTorch."""

from __future__ import annotations

import logging
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import onnx as onnx_format
import pytest

from engram.providers.local import LocalMiniLM


def operators(path: Path) -> Counter[str]:
    return Counter(node.op_type for node in onnx_format.load(str(path)).graph.node)


def test_onnx_and_torch_give_the_same_vectors(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    stale = tmp_path / "all-MiniLM-L6-v2-0123456789abcdef.onnx"  # an earlier version's export
    stale.write_bytes(b"not a graph")
    onnx = LocalMiniLM(runtime="onnx", cache_dir=tmp_path, batch_size=2)
    with warnings.catch_warnings(record=True) as said, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")
        onnx.load()  # the first start exports the graph: quietly, and checked against the model
    assert onnx.runtime == "onnx"
    assert [str(w.message)[:120] for w in said] == [] and caplog.records == []
    assert len(list(tmp_path.glob("*.onnx"))) == 1 and not stale.exists()  # exported once, the stale one gone
    # Fused: one attention operator per layer, about 50 operators where the plain trace has about 500.
    ops = operators(next(tmp_path.glob("*.onnx")))
    assert ops["Attention"] == 6 and ops["EmbedLayerNormalization"] == 1 and ops.total() < 100
    torch = LocalMiniLM(runtime="torch")
    torch.load()
    assert torch.runtime == "torch"
    texts = ["Error 504 on the billing gateway", "", "word " * 400, "Ünïcödé текст 日本語", "short"]
    a, b = np.stack(onnx.encode_sync(texts)), np.stack(torch.encode_sync(texts))
    assert a.shape == (5, 384)
    assert float(np.abs(a - b).max()) < 1e-5
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    # A second embedder reuses the exported file.
    again = LocalMiniLM(runtime="onnx", cache_dir=tmp_path)
    again.load()
    assert again.runtime == "onnx" and len(list(tmp_path.glob("*.onnx"))) == 1


def test_a_broken_export_falls_back_to_torch(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the cache directory should be")
    embedder = LocalMiniLM(runtime="onnx", cache_dir=blocked)
    embedder.load()
    assert embedder.runtime == "torch"
    # The export leaves the model as it found it (its attention switched only while tracing).
    assert embedder._model[0].auto_model.config._attn_implementation != "eager"
    assert len(embedder.encode_sync(["still works"])[0]) == 384


def test_an_export_that_embeds_differently_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The export is checked against the model it came from; a graph that disagrees is thrown away."""
    from engram.providers import onnx

    real = onnx.OnnxEncoder.encode
    monkeypatch.setattr(onnx.OnnxEncoder, "encode", lambda self, texts: real(self, texts)[:, ::-1].copy())
    embedder = LocalMiniLM(runtime="onnx", cache_dir=tmp_path)
    embedder.load()
    assert embedder.runtime == "torch" and list(tmp_path.glob("*.onnx")) == []


def test_an_export_the_fusions_fail_on_runs_unfused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from engram.providers import onnx

    def broken(path: Path, **_: int) -> None:
        raise RuntimeError("no fusion for this graph")

    monkeypatch.setattr(onnx, "fuse", broken)
    embedder = LocalMiniLM(runtime="onnx", cache_dir=tmp_path)
    with caplog.at_level(logging.WARNING):
        embedder.load()
    assert embedder.runtime == "onnx"
    assert [r.getMessage() for r in caplog.records] == [
        "ONNX Runtime's fusions failed, the plain graph is used: no fusion for this graph"
    ]
    ops = operators(next(tmp_path.glob("*.onnx")))
    assert ops["Attention"] == 0 and ops.total() > 300
    torch = LocalMiniLM(runtime="torch")
    a, b = embedder.encode_sync(["the plain graph"])[0], torch.encode_sync(["the plain graph"])[0]
    assert float(np.abs(np.asarray(a) - np.asarray(b)).max()) < 1e-5
