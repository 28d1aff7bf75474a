"""The default local embedder runs through ONNX Runtime and gives the same vectors as PyTorch."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import numpy as np
import pytest

from engram.providers.local import LocalMiniLM


def test_onnx_and_torch_give_the_same_vectors(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    onnx = LocalMiniLM(runtime="onnx", cache_dir=tmp_path, batch_size=2)
    with warnings.catch_warnings(record=True) as said, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")
        onnx.load()  # the first start exports the graph: quietly, and checked against the model
    assert onnx.runtime == "onnx"
    assert [str(w.message)[:120] for w in said] == [] and caplog.records == []
    assert len(list(tmp_path.glob("*.onnx"))) == 1  # exported once, into the cache directory
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
    assert len(embedder.encode_sync(["still works"])[0]) == 384


def test_an_export_that_embeds_differently_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The export is checked against the model it came from; a graph that disagrees is thrown away."""
    from engram.providers import onnx

    real = onnx.OnnxEncoder.encode
    monkeypatch.setattr(onnx.OnnxEncoder, "encode", lambda self, texts: real(self, texts)[:, ::-1].copy())
    embedder = LocalMiniLM(runtime="onnx", cache_dir=tmp_path)
    embedder.load()
    assert embedder.runtime == "torch" and list(tmp_path.glob("*.onnx")) == []
