"""The interpreter through numpy (kiln.interpret): Kiln's programs against float64 references."""
import numpy as np
import pytest

import kiln
from kiln import programs


def bf16(x):
    """Rounds float64 to bfloat16 (nearest even) and back: the values a bf16 tensor holds."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
    return b.astype(np.uint32).view(np.float32).astype(np.float64)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_gemm_matches_numpy(rng):
    a, b = rng.standard_normal((48, 40)), rng.standard_normal((40, 72))
    out = kiln.interpret(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.f32), A=a, B=b)["C"]
    assert out.shape == (48, 72)
    np.testing.assert_allclose(out, bf16(a) @ bf16(b), rtol=1e-5, atol=1e-5)  # f32 sums of exact products


def test_kmajor_b_reads_the_same_matrix(rng):
    a, b = rng.standard_normal((16, 32)), rng.standard_normal((32, 24))
    row = kiln.interpret(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.f32), A=a, B=b)["C"]
    kmajor = kiln.interpret(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.f32, b_kmajor=True), A=a, B=b)["C"]
    np.testing.assert_array_equal(row, kmajor)


def test_scaled_mm_with_bias(rng):
    a, b = rng.standard_normal((32, 64)), rng.standard_normal((64, 16))
    sa, sb, bias = rng.random(32) + 0.5, rng.random(16) + 0.5, rng.standard_normal(16)
    out = kiln.interpret(programs.scaled_mm_program(kiln.f32, bias=kiln.bf16), A=a, B=b, scale_a=sa,
                         scale_b=sb, bias=bias)["C"]
    # e4m3 keeps 3 mantissa bits: compare against the exact product of the rounded inputs.
    e4m3 = kiln.interpret(programs.scaled_mm_program(kiln.f32), A=a, B=b, scale_a=np.ones(32),
                          scale_b=np.ones(16))["C"]
    np.testing.assert_allclose(out, e4m3 * sa[:, None] * sb[None, :] + bf16(bias), rtol=1e-5, atol=1e-4)
    assert np.abs(e4m3 - a @ b).max() < 0.15 * np.abs(a @ b).max()


def test_grouped_rows_pick_their_b(rng):
    a, b = rng.standard_normal((128, 16)), rng.standard_normal((2, 16, 8))
    ids = np.repeat([0, 1], 64)
    out = kiln.interpret(programs.grouped_mm_program(kiln.bf16, 64), A=a, B=b, group_ids=ids)["C"]
    want = np.concatenate([bf16(a[:64]) @ bf16(b[0]), bf16(a[64:]) @ bf16(b[1])])
    np.testing.assert_allclose(out, bf16(want), rtol=1e-2, atol=1e-2)


def test_missing_and_unknown_arguments_are_user_errors(rng):
    module = programs.gemm_program(kiln.bf16, kiln.bf16, kiln.f32)
    with pytest.raises(kiln.Error, match="input B is not given"):
        kiln.interpret(module, dims={"N": 8}, A=rng.standard_normal((8, 8)))
    with pytest.raises(kiln.Error, match="dim N of tensor B is not given"):
        kiln.interpret(module, A=rng.standard_normal((8, 8)))
    with pytest.raises(kiln.Error, match="has no argument X"):
        kiln.interpret(module, X=np.ones(3))


@pytest.mark.parametrize("a_col,b_kmajor", [(False, False), (False, True), (True, False), (True, True)])
def test_every_layout_and_leading_dimension_reads_the_same_matrices(rng, a_col, b_kmajor):
    # A 37 x 45 times B 45 x 29: odd sizes, leading dimensions past the rows (lda, ldb given in dims).
    a, b = rng.standard_normal((37, 45)), rng.standard_normal((45, 29))
    dense = kiln.interpret(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.f32), A=a, B=b)["C"]
    for strided in (False, True):
        program = programs.gemm_program(kiln.bf16, kiln.bf16, kiln.f32, b_kmajor, a_colmajor=a_col,
                                        a_strided=strided, b_strided=strided)
        dims = {"lda": 50, "ldb": 48} if strided else {}
        out = kiln.interpret(program, dims=dims, A=a, B=b)["C"]
        np.testing.assert_array_equal(out, dense)


def test_strided_tensors_in_the_dsl():
    p = kiln.Program("strided")
    M, N, ldc = p.dims("M", "N", "ldc")
    X = p.input("X", kiln.f32, [M, N])
    Y = p.output("Y", kiln.f32, [M, N], strides=[ldc, 1])
    p.tile([M, N], lambda m, n: Y.__setitem__((m, n), X[m, n] * 2.0))
    m = p.finish()
    assert 'tensor<f32, [M, N], strides = ["ldc", 1]>' in m.text
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(kiln.interpret(m, dims={"ldc": 7}, X=x)["Y"], 2 * x)
    with pytest.raises(kiln.Error, match="give ldc in dims="):
        kiln.interpret(m, X=x)
