"""The programs behind kiln.ops, built with the DSL; torch-free, so they compile and interpret
anywhere (tests/python/test_programs.py)."""
from __future__ import annotations

from . import _kiln


def gemm_program(a, b, c, b_kmajor: bool = False, bias=None, a_colmajor: bool = False, a_strided: bool = False,
                 b_strided: bool = False) -> _kiln.Module:
    """C[M, N] = A[M, K] @ B[K, N] (+ bias[N]) with f32 accumulation. A column-major when a_colmajor,
    B K-major when b_kmajor; a strided operand's rows (or columns) are dim lda (ldb) apart, given
    at launch like any dim (docs/layouts.md)."""
    p = _kiln.Program("kiln_gemm")
    M, N, K = p.dims("M", "N", "K")
    lda = p.dim("lda") if a_strided else None
    ldb = p.dim("ldb") if b_strided else None
    if a_strided:
        A = p.input("A", a, [M, K], strides=[1, lda] if a_colmajor else [lda, 1])
    else:
        A = p.input("A", a, [M, K], [0, 1] if a_colmajor else [])
    if b_strided:
        B = p.input("B", b, [K, N], strides=[1, ldb] if b_kmajor else [ldb, 1])
    else:
        B = p.input("B", b, [K, N], [0, 1] if b_kmajor else [])
    Bias = p.input("bias", bias, [N]) if bias is not None else None
    C = p.output("C", c, [M, N])

    def body(m, n):
        acc = p.reduce(K, p.zeros(_kiln.dtype.f32, [m, n]), lambda k, acc: _kiln.dot(A[m, k], B[k, n], acc))
        if Bias is not None:
            acc = acc + _kiln.cast(_kiln.dtype.f32, Bias[n])
        C[m, n] = acc if c == _kiln.dtype.f32 else _kiln.cast(c, acc)
    p.tile([M, N], body)
    return p.finish()


SCALINGS = ("tensorwise", "rowwise", "block_1x128_128x128", "block_1x128_1x128")


def scaled_mm_program(c, bias=None, scaling: str = "rowwise", a=_kiln.dtype.f8e4m3, b=_kiln.dtype.f8e4m3) -> _kiln.Module:
    """FP8 (e4m3 or e5m2 operands): C = A @ B with B K-major and the scales of `scaling` (ops/fp8_programs.h, the
    layouts torch._scaled_mm takes): tensorwise scale_a, scale_b [1], applied once after the K
    loop; rowwise scale_a [M], scale_b [N] (+ bias[N]); blockwise scale_a [M, K] in blocks of
    [1, 128] stored M-major, and scale_b [K, N] in blocks of [128, 128] (stored [N/128][K/128]) or
    of [128, 1] (stored [K/128][N]), applied to each 128-wide slice of K before it is summed."""
    if scaling not in SCALINGS:
        raise _kiln.Error(f"scaling {scaling!r} is not one of {', '.join(SCALINGS)}")
    f32 = _kiln.dtype.f32
    p = _kiln.Program("kiln_scaled_mm" if scaling == "rowwise" else f"kiln_scaled_mm_{scaling}")
    M, N, K = p.dims("M", "N", "K")
    A = p.input("A", a, [M, K])
    B = p.input("B", b, [K, N], [0, 1])
    if scaling == "tensorwise":
        SA, SB = p.input("scale_a", f32, [1]), p.input("scale_b", f32, [1])
    elif scaling == "rowwise":
        SA, SB = p.input("scale_a", f32, [M]), p.input("scale_b", f32, [N])
    else:
        SA = p.scales("scale_a", [M, K], [1, 128], [0, 1])
        SB = (p.scales("scale_b", [K, N], [128, 128], [0, 1]) if scaling == "block_1x128_128x128"
              else p.scales("scale_b", [K, N], [128, 1]))
    Bias = p.input("bias", bias, [N]) if bias is not None else None
    C = p.output("C", c, [M, N])

    def body(m, n):
        zero = p.zeros(f32, [m, n])
        if scaling.startswith("block"):
            acc = p.reduce(K, zero, lambda k, acc: _kiln.dot_scaled(A[m, k], SA[m, k], B[k, n], SB[k, n], acc))
        else:
            acc = p.reduce(K, zero, lambda k, acc: _kiln.dot(A[m, k], B[k, n], acc))
            acc = (_kiln.scale(acc, SA.item() * SB.item()) if scaling == "tensorwise"
                   else _kiln.scale(_kiln.scale(acc, SA[m]), SB[n]))
        if Bias is not None:
            acc = acc + _kiln.cast(f32, Bias[n])
        C[m, n] = acc if c == f32 else _kiln.cast(c, acc)
    p.tile([M, N], body)
    return p.finish()


def ragged_mm_program(dtype, out, along: str = "M", b_kmajor: bool = True) -> _kiln.Module:
    """Ragged groups given by offsets (torch._grouped_mm's `offs`, cumulative ends): along M,
    C[rows of g] = A[rows of g] @ B[g] with A [M, K], B [G, K, N] (K-major when b_kmajor), C [M, N];
    along K (weight gradients), C[g] = A[:, ks of g] @ B[ks of g, :] with A [M, K] (M contiguous,
    x.t() of a row-major [K, M]), B [K, N], C [G, M, N]. Rows (or columns) past the last offset are
    not computed (tile_ops.h, "Ragged groups"). FP8 along K (the blockwise weight gradient, as
    ops/grouped_programs.h): A [M, K] and B [K, N] both K-major, scale_a [M, K] in blocks of [1, 128]
    (stored [ceil(K/128)][M]) and scale_b [K, N] in blocks of [128, 1] (stored [ceil(K/128)][N])."""
    f32 = _kiln.dtype.f32
    fp8 = dtype in (_kiln.dtype.f8e4m3, _kiln.dtype.f8e5m2)
    p = _kiln.Program(f"kiln_ragged_mm_{along.lower()}" + ("_fp8" if fp8 else ""))
    G, M, N, K = p.dims("G", "M", "N", "K")
    SA = SB = None
    if along == "M":
        A = p.input("A", dtype, [M, K])
        B = p.input("B", dtype, [G, K, N], [1, 2, 0] if b_kmajor else [])
    elif fp8:
        A = p.input("A", dtype, [M, K])
        B = p.input("B", dtype, [K, N], [0, 1])
        SA = p.scales("scale_a", [M, K], [1, 128], [0, 1])
        SB = p.scales("scale_b", [K, N], [128, 1])
    else:
        A = p.input("A", dtype, [M, K], [0, 1])
        B = p.input("B", dtype, [K, N])
    offs = p.input("offsets", _kiln.dtype.i32, [G])
    C = p.output("C", out, [M, N] if along == "M" else [G, M, N])

    def body(g, m, n):
        if along == "M":
            acc = p.reduce(K, p.zeros(f32, [m, n]), lambda k, acc: _kiln.dot(A[m, k], B[g, k, n], acc))
            C[m, n] = acc if out == f32 else _kiln.cast(out, acc)
        elif SA is not None:
            acc = p.reduce(K, p.zeros(f32, [m, n]),
                           lambda k, acc: _kiln.dot_scaled(A[m, k], SA[m, k], B[k, n], SB[k, n], acc))
            C[g, m, n] = acc if out == f32 else _kiln.cast(out, acc)
        else:
            acc = p.reduce(K, p.zeros(f32, [m, n]), lambda k, acc: _kiln.dot(A[m, k], B[k, n], acc))
            C[g, m, n] = acc if out == f32 else _kiln.cast(out, acc)
    p.tile_grouped(G, M if along == "M" else K, offs, [M, N], body)
    return p.finish()


def grouped_mm_program(dtype, align: int) -> _kiln.Module:
    """Each row block of A multiplies the B its group picks: C[M, N] = A[M, K] @ B[group(M), K, N]."""
    p = _kiln.Program("kiln_grouped_mm")
    G, M, N, K = p.dims("G", "M", "N", "K")
    A = p.input("A", dtype, [M, K])
    B = p.input("B", dtype, [G, K, N])
    ids = p.input("group_ids", _kiln.dtype.i32, [M])
    C = p.output("C", dtype, [M, N])

    def body(m, n):
        g = p.group_index(ids, m, align)
        acc = p.reduce(K, p.zeros(_kiln.dtype.f32, [m, n]), lambda k, acc: _kiln.dot(A[m, k], B[g, k, n], acc))
        C[m, n] = _kiln.cast(dtype, acc)
    p.tile([M, N], body)
    return p.finish()


def softmax_program(dtype=_kiln.dtype.bf16) -> _kiln.Module:
    """Row softmax: Y = exp(x - max(x)) / sum(exp(x - max(x))) along each row of X [M, N], f32 math
    (examples/softmax.cpp, op for op)."""
    p = _kiln.Program("softmax")
    M, N = p.dims("M", "N")
    X = p.input("X", dtype, [M, N])
    Y = p.output("Y", dtype, [M, N])

    def body(m):
        n = p.span(N)
        x = _kiln.cast(_kiln.dtype.f32, X[m, n])
        e = _kiln.exp(x - x.max(N))
        Y[m, n] = _kiln.cast(dtype, e / e.sum(N))
    p.tile([M], body)
    return p.finish()


def cross_entropy_program() -> _kiln.Module:
    """loss[m] = logsumexp(X[m, :]) - X[m, labels[m]] for BF16 logits [M, V] and i32 labels [M]; a
    label outside [0, V) picks no logit (examples/cross_entropy.cpp, op for op)."""
    p = _kiln.Program("cross_entropy")
    M, V = p.dims("M", "V")
    X = p.input("X", _kiln.dtype.bf16, [M, V])
    labels = p.input("labels", _kiln.dtype.i32, [M])
    loss = p.output("loss", _kiln.dtype.f32, [M])

    def body(m):
        v = p.span(V)
        x = _kiln.cast(_kiln.dtype.f32, X[m, v])
        mx = x.max(V)
        lse = mx + _kiln.log(_kiln.exp(x - mx).sum(V))
        label = labels[m]  # loaded before the iota, as in the C++ example's text
        picked = _kiln.where(_kiln.eq(_kiln.broadcast(p.iota(v), [m, v]), label), x, 0.0).sum(V)
        loss[m] = lse - picked
    p.tile([M], body)
    return p.finish()
