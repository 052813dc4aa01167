"""Block-scaled FP8 and ragged grouped GEMMs from Python: the DSL (Program.scales, dot_scaled,
Tensor.item, Program.tile_grouped), the programs behind kiln.ops, and the interpreter's exact
scale semantics and group bounds, against numpy; torch-level argument errors where torch is."""
import numpy as np
import pytest

import kiln
from kiln import programs


def e4m3(x):
    """The e4m3 values the interpreter stores: run through a one-op program (round to nearest even,
    saturating)."""
    x = np.asarray(x, dtype=np.float64)
    p = kiln.Program("round_e4m3")
    (M,) = p.dims("M")
    X = p.input("X", kiln.f32, [M])
    Y = p.output("Y", kiln.f8e4m3, [M])
    p.tile([M], lambda m: Y.__setitem__(m, kiln.cast(kiln.f8e4m3, X[m])))
    return kiln.interpret(p.finish(), X=x.ravel())["Y"].reshape(x.shape)


@pytest.fixture
def rng():
    return np.random.default_rng(41)


def blockwise_reference(a, sa, b, sb_of):
    """fp64: each 128-wide slice of K's sums times sa[m, slice] * sb(slice, n)."""
    M, K = a.shape
    N = b.shape[1]
    out = np.zeros((M, N))
    for s in range(0, K, 128):
        out += (a[:, s:s + 128] @ b[s:s + 128]) * sa[:, s // 128][:, None] * sb_of(s // 128)[None, :]
    return out


def test_blockwise_1x128_128x128_scales_every_slice(rng):
    M, N, K = 40, 200, 300
    a, b = e4m3(rng.standard_normal((M, K)) * 8), e4m3(rng.standard_normal((K, N)) * 8)
    sa = rng.uniform(0.25, 4, (M, 3)).astype(np.float32).astype(np.float64)
    sb = rng.uniform(0.25, 4, (3, 2)).astype(np.float32).astype(np.float64)  # [K/128, N/128] blocks
    module = programs.scaled_mm_program(kiln.f32, scaling="block_1x128_128x128")
    out = kiln.interpret(module, A=a, B=b, scale_a=sa, scale_b=sb)["C"]
    want = blockwise_reference(a, sa, b, lambda kb: np.repeat(sb[kb], 128)[:N])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-3)
    # Scaling once after the K loop would be a different function: the slices' scales matter.
    assert np.abs(out - (a @ b) * sa[:, :1] * sb[0, 0]).max() > 1.0


def test_blockwise_1x128_1x128_and_tensorwise(rng):
    M, N, K = 16, 24, 256
    a, b = e4m3(rng.standard_normal((M, K))), e4m3(rng.standard_normal((K, N)))
    sa, sb = rng.uniform(0.5, 2, (M, 2)), rng.uniform(0.5, 2, (2, N))
    out = kiln.interpret(programs.scaled_mm_program(kiln.f32, scaling="block_1x128_1x128"), A=a, B=b, scale_a=sa,
                         scale_b=sb)["C"]
    np.testing.assert_allclose(out, blockwise_reference(a, sa.astype(np.float32), b, lambda kb: sb[kb].astype(np.float32)),
                               rtol=1e-5, atol=1e-3)
    tw = kiln.interpret(programs.scaled_mm_program(kiln.f32, scaling="tensorwise"), A=a, B=b, scale_a=[2.0],
                        scale_b=[0.5])["C"]
    np.testing.assert_allclose(tw, a @ b, rtol=1e-5, atol=1e-4)


def test_a_scale_tensor_of_the_wrong_shape_names_the_argument(rng):
    module = programs.scaled_mm_program(kiln.f32, scaling="block_1x128_128x128")
    with pytest.raises(kiln.Error, match=r"scale_a has shape \[4, 2\], but it holds one scale per block of 128 along "
                                         r"K = 300: that axis must be ceil\(300 / 128\) = 3"):
        kiln.interpret(module, A=np.ones((4, 300)), B=np.ones((300, 8)), scale_a=np.ones((4, 2)),
                       scale_b=np.ones((3, 1)))


def bf16(x):
    """Rounds float64 to bfloat16 (nearest even) and back: the values a bf16 tensor holds."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
    return b.astype(np.uint32).view(np.float32).astype(np.float64)


def test_ragged_groups_along_m_and_k(rng):
    M, N, K, G = 100, 16, 32, 3
    a, b = bf16(rng.standard_normal((M, K))), bf16(rng.standard_normal((G, K, N)))
    offs = np.array([30, 30, 90])  # an empty group; rows 90.. belong to none
    out = kiln.interpret(programs.ragged_mm_program(kiln.bf16, kiln.f32, "M"), A=a, B=b, offsets=offs)["C"]
    np.testing.assert_allclose(out[:30], a[:30] @ b[0], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(out[30:90], a[30:90] @ b[2], rtol=1e-5, atol=1e-4)
    assert (out[90:] == 0).all(), "rows no group owns keep what the output held (zeros here)"
    wg = kiln.interpret(programs.ragged_mm_program(kiln.bf16, kiln.f32, "K"), A=a[:, :K], B=b[0],
                        offsets=np.array([10, 10, 32]))["C"]
    np.testing.assert_allclose(wg[0], a[:, :10] @ b[0][:10], rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(wg[1], np.zeros((M, N)))
    np.testing.assert_allclose(wg[2], a[:, 10:] @ b[0][10:], rtol=1e-5, atol=1e-4)


def test_fp8_groups_along_k_scale_each_block_of_their_tokens(rng):
    # The blockwise weight gradient: K-major e4m3 operands, 1x128 scales along K for both; groups
    # of whole 128-token blocks, an empty one (zeros), tokens 384.. that no group owns.
    M, N, K = 16, 24, 512
    a, b = e4m3(rng.standard_normal((M, K))), e4m3(rng.standard_normal((K, N)))
    sa = rng.uniform(0.5, 2, (M, 4)).astype(np.float32).astype(np.float64)
    sb = rng.uniform(0.5, 2, (4, N)).astype(np.float32).astype(np.float64)
    module = programs.ragged_mm_program(kiln.f8e4m3, kiln.f32, "K")
    wg = kiln.interpret(module, A=a, B=b, scale_a=sa, scale_b=sb, offsets=np.array([128, 128, 384]))["C"]
    np.testing.assert_allclose(wg[0], blockwise_reference(a[:, :128], sa, b[:128], lambda kb: sb[kb]),
                               rtol=1e-5, atol=1e-3)
    np.testing.assert_array_equal(wg[1], np.zeros((M, N)))
    np.testing.assert_allclose(wg[2], blockwise_reference(a[:, 128:384], sa[:, 1:], b[128:384], lambda kb: sb[kb + 1]),
                               rtol=1e-5, atol=1e-3)


def test_bad_offsets_are_refused_naming_the_tensor(rng):
    module = programs.ragged_mm_program(kiln.bf16, kiln.f32, "M")
    a, b = np.ones((10, 4)), np.ones((2, 4, 4))
    with pytest.raises(kiln.Error, match=r"the offsets in 'offsets' must not decrease: group 1 ends at 3, before "
                                         r"group 0's end 5"):
        kiln.interpret(module, A=a, B=b, offsets=np.array([5, 3]))
    with pytest.raises(kiln.Error, match=r"the offsets in 'offsets' must lie in \[0, M\] = \[0, 10\]: group 1 ends at 11"):
        kiln.interpret(module, A=a, B=b, offsets=np.array([5, 11]))


@pytest.mark.torch
def test_scaled_mm_and_grouped_mm_argument_errors_name_the_argument():
    import torch
    a = torch.zeros((64, 256)).to(torch.float8_e4m3fn)
    b = torch.zeros((32, 256)).to(torch.float8_e4m3fn).t()
    with pytest.raises(kiln.Error, match=r"scale_a has shape \[64, 3\]: with scale_b's block_1x128_128x128 scales it "
                                         r"must be \[M, ceil\(K/128\)\] = \[64, 2\]"):
        kiln.ops.scaled_mm(a, b, torch.ones((64, 3)), torch.ones((1, 4)).t())
    with pytest.raises(kiln.Error, match="scale_b is torch.float16; scales are float32"):
        kiln.ops.scaled_mm(a, b, torch.ones((64, 2)), torch.ones((4, 1), dtype=torch.float16))
    x, w = torch.zeros((10, 8), dtype=torch.bfloat16), torch.zeros((2, 8, 4), dtype=torch.bfloat16)
    with pytest.raises(kiln.Error, match=r"grouped_mm: offs must not decrease: group 1 ends at 3, before group 0's end 5"):
        kiln.ops.grouped_mm(x, w, torch.tensor([5, 3], dtype=torch.int32))
    with pytest.raises(kiln.Error, match=r"grouped_mm: offs must lie in \[0, M\] = \[0, 10\]: group 1 ends at 11"):
        kiln.ops.grouped_mm(x, w, torch.tensor([5, 11], dtype=torch.int32))
    with pytest.raises(kiln.Error, match=r"grouped_mm: offs must be int32 \[G\] = \[2\]"):
        kiln.ops.grouped_mm(x, w, torch.tensor([5, 10]))
    # FP8 groups along K: whole 128-token scale blocks per group, the scales' shapes, K-major operands.
    xa = torch.zeros((16, 384)).to(torch.float8_e4m3fn)
    yb = torch.zeros((8, 384)).to(torch.float8_e4m3fn).t()
    sa, sb = torch.ones((16, 3)), torch.ones((8, 3))
    with pytest.raises(kiln.Error, match=r"grouped_mm: offs must be multiples of 128 \(float8 groups along K hold "
                                         r"whole 1x128 scale blocks\): group 1 ends at 200"):
        kiln.ops.grouped_mm(xa, yb, torch.tensor([128, 200], dtype=torch.int32), scale_a=sa, scale_b=sb)
    with pytest.raises(kiln.Error, match=r"grouped_mm: scale_b must be float32 \[N, ceil\(K/128\)\] = \[8, 3\]"):
        kiln.ops.grouped_mm(xa, yb, torch.tensor([128, 384], dtype=torch.int32), scale_a=sa, scale_b=sb.t())
    with pytest.raises(kiln.Error, match=r"grouped_mm: float8 b must be column-major \[K, N\] \(K-major\)"):
        kiln.ops.grouped_mm(xa, yb.contiguous(), torch.tensor([128, 384], dtype=torch.int32), scale_a=sa, scale_b=sb)
    with pytest.raises(kiln.Error, match=r"grouped_mm: float8 operands need scale_a"):
        kiln.ops.grouped_mm(xa, yb, torch.tensor([128, 384], dtype=torch.int32))
