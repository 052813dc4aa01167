"""kiln on torch tensors, on a GPU (the H200): kiln.ops against torch within dtype tolerance, a
torch.compile graph with no graph break, argument checks, and the warm-cache call overhead."""
import time

import pytest

import kiln

pytestmark = [pytest.mark.torch, pytest.mark.gpu]

SHAPES = [(64, 5120, 5120), (128, 8192, 8192), (4096, 4096, 4096), (8192, 1024, 4096), (1000, 1032, 264)]


def torch_mod():
    import torch
    return torch


def rel_err(x, ref):
    return ((x.float() - ref.float()).abs().max() / ref.float().abs().max()).item()


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("kmajor", [False, True])
def test_gemm_matches_torch(m, n, k, kmajor):
    torch = torch_mod()
    import kiln.ops
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() if kmajor else \
        torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    out = kiln.ops.gemm(a, b)
    ref = a.float() @ b.float()
    assert out.dtype == torch.bfloat16 and out.shape == (m, n)
    assert rel_err(out, ref) < 1e-2
    out32 = kiln.ops.gemm(a, b, out_dtype=torch.float32)
    assert rel_err(out32, ref) < 1e-4


@pytest.mark.parametrize("m,n,k", [(64, 5120, 5120), (4096, 7168, 2048), (1000, 1040, 512)])
@pytest.mark.parametrize("rowwise", [False, True])
def test_scaled_mm_matches_torch(m, n, k, rowwise):
    torch = torch_mod()
    import kiln.ops
    a = (torch.randn(m, k, device="cuda") / 4).to(torch.float8_e4m3fn)
    b = (torch.randn(n, k, device="cuda") / 4).to(torch.float8_e4m3fn).t()
    if rowwise:
        sa, sb = torch.rand(m, 1, device="cuda") + 0.5, torch.rand(1, n, device="cuda") + 0.5
    else:
        sa, sb = torch.tensor(0.7, device="cuda"), torch.tensor(1.3, device="cuda")
    bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    ref = torch._scaled_mm(a, b, sa, sb, bias=bias, out_dtype=torch.bfloat16)
    out = kiln.ops.scaled_mm(a, b, sa, sb, bias=bias, out_dtype=torch.bfloat16)
    assert rel_err(out, ref) < 1e-2


def blockwise_reference(a, sa, b, sb_of):
    """fp64: each 128-slice of K's sums times scale_a[m, slice] * scale_b(slice)[n]."""
    out, K = 0, a.shape[1]
    for s in range(0, K, 128):
        part = a[:, s:s + 128].double() @ b[s:s + 128].double()
        out = out + part * sa[:, s // 128].double()[:, None] * sb_of(s // 128).double()[None, :]
    return out


@pytest.mark.parametrize("mode", ["block_1x128_128x128", "block_1x128_1x128"])
def test_scaled_mm_blockwise_matches_fp64(mode):
    torch = torch_mod()
    import kiln.ops
    m, n, k = 256, 384, 1024
    a = (torch.randn(m, k, device="cuda") * 4).to(torch.float8_e4m3fn)
    b = (torch.randn(n, k, device="cuda") * 4).to(torch.float8_e4m3fn).t()
    sa = (torch.rand(k // 128, m, device="cuda") + 0.5).t()                # (M, K/128), strides (1, M)
    if mode == "block_1x128_128x128":
        sb = (torch.rand(n // 128, k // 128, device="cuda") + 0.5).t()     # (K/128, N/128), strides (1, K/128)
        sb_of = lambda kb: sb[kb].repeat_interleave(128)  # noqa: E731
    else:
        sb = (torch.rand(k // 128, n, device="cuda") + 0.5).t()            # (N, K/128), strides (1, N)
        sb_of = lambda kb: sb[:, kb]  # noqa: E731
    out = kiln.ops.scaled_mm(a, b, sa, sb, out_dtype=torch.float32)
    ref = blockwise_reference(a.float(), sa, b.float(), sb_of)
    assert rel_err(out, ref) < 1e-3


# Ragged groups on the device (sm90's ragged tile walk, docs/grouped-gemm.md): no host sync, an
# empty group, groups not multiples of any tile, rows past the last offset left unwritten.
def test_grouped_mm_ragged_offsets_match_torch():
    torch = torch_mod()
    import kiln.ops
    g, k, n = 4, 512, 768
    offs = torch.tensor([100, 100, 333, 500], device="cuda", dtype=torch.int32)  # an empty group, rows 500.. unowned
    a = torch.randn(520, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16).transpose(-2, -1)
    out = kiln.ops.grouped_mm(a, b, offs)
    ref = torch._grouped_mm(a, b, offs=offs)
    assert rel_err(out[:500], ref[:500]) < 1e-2


# Groups along K (2D x 2D, the weight gradient): dW[g] = x[tokens of g].t() @ dy[tokens of g], f32,
# an empty group zeros, token counts off the kernel's K step, tokens past the last offset unused.
def test_grouped_mm_groups_along_k_match_torch():
    torch = torch_mod()
    import kiln.ops
    m, n = 384, 520
    offs = torch.tensor([70, 70, 201, 202, 902], device="cuda", dtype=torch.int32)
    x = torch.randn(1000, m, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(1000, n, device="cuda", dtype=torch.bfloat16)
    out = kiln.ops.grouped_mm(x.t(), dy, offs)
    assert out.shape == (5, m, n) and out.dtype == torch.float32
    starts = [0] + offs.tolist()[:-1]
    ref = torch.stack([x[s:e].float().t() @ dy[s:e].float() for s, e in zip(starts, offs.tolist())])
    assert torch.count_nonzero(out[1]) == 0
    assert rel_err(out, ref) < 1e-3


# FP8 groups along K (the blockwise weight gradient): a [M, T] row-major and b [T, N] column-major
# e4m3, 1x128 scales along K for both, groups of whole 128-token blocks (an empty one: zeros).
def test_grouped_mm_fp8_groups_along_k_match_float64():
    torch = torch_mod()
    import kiln.ops
    m, n, t = 392, 520, 1280
    tokens = [128, 0, 512, 384]
    offs = torch.tensor(tokens, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
    a = torch.randn(m, t, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, t, device="cuda").to(torch.float8_e4m3fn).t()
    sa = torch.rand(m, t // 128, device="cuda") + 0.5
    sb = torch.rand(n, t // 128, device="cuda") + 0.5
    out = kiln.ops.grouped_mm(a, b, offs, scale_a=sa, scale_b=sb)
    assert out.shape == (4, m, n) and out.dtype == torch.float32
    ad, bd, ref, lo = a.double(), b.double(), [], 0
    for g, k in enumerate(tokens):
        acc = torch.zeros(m, n, device="cuda", dtype=torch.float64)
        for s in range(lo, lo + k, 128):
            acc += (ad[:, s:s + 128] @ bd[s:s + 128]) * sa[:, s // 128, None].double() * sb[None, :, s // 128].double()
        ref.append(acc)
        lo += k
    assert torch.count_nonzero(out[1]) == 0
    assert rel_err(out, torch.stack(ref).float()) < 1e-3


def test_grouped_mm_matches_torch():
    torch = torch_mod()
    import kiln.ops
    g, k, n = 4, 512, 768
    offs = torch.tensor([128, 256, 512, 576], device="cuda", dtype=torch.int32)
    a = torch.randn(576, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(g, k, n, device="cuda", dtype=torch.bfloat16)
    out = kiln.ops.grouped_mm(a, b, offs)
    starts = [0] + offs.tolist()[:-1]
    ref = torch.cat([a[s:e].float() @ b[i].float() for i, (s, e) in enumerate(zip(starts, offs.tolist()))])
    assert rel_err(out, ref) < 1e-2


@pytest.mark.parametrize("m,n", [(4096, 4096), (70, 96), (16, 32768)])
def test_softmax_from_the_dsl_matches_torch(m, n):
    torch = torch_mod()
    import kiln
    from kiln import programs
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16) * 3
    y = torch.full_like(x, float("nan"))  # poisoned: a row the kernel skips fails the check
    k = kiln.compile(programs.softmax_program(), dims={"M": m, "N": n})
    assert k.config.startswith("strategy=rowwise"), k.why
    k(x, y)
    assert rel_err(y, torch.softmax(x.float(), dim=1)) < 1e-2


def test_torch_compile_holds_the_custom_op_without_a_graph_break():
    torch = torch_mod()
    import kiln.ops  # noqa: F401  (registers torch.ops.kiln.*)

    def f(a, b, bias):
        return torch.relu(torch.ops.kiln.gemm(a, b) + bias)
    a = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(512, 384, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(384, device="cuda", dtype=torch.bfloat16)
    explained = torch._dynamo.explain(f)(a, b, bias)
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    compiled = torch.compile(f, fullgraph=True)  # fullgraph: a break would raise
    assert rel_err(compiled(a, b, bias), torch.relu(a.float() @ b.float() + bias.float())) < 2e-2


def test_bad_arguments_are_clear_errors():
    torch = torch_mod()
    import kiln
    import kiln.ops
    from kiln import programs
    k = kiln.compile(programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16), dims={"M": 256, "N": 256, "K": 256})
    a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(256, 256, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(kiln.Error, match="is on cpu"):
        k(a.cpu(), a, c)
    with pytest.raises(kiln.Error, match="B is torch.float16; the program declares it bfloat16"):
        k(a, a.half(), c)
    with pytest.raises(kiln.Error, match="strides"):
        k(a, a.t(), c)
    # B binds N = 128 first (arguments bind in order), so C is the one that disagrees.
    with pytest.raises(kiln.Error, match=r"C has shape \[256, 256\], but N = 128"):
        k(a, a[:, :128].contiguous(), c)
    with pytest.raises(kiln.Error, match="aligned"):
        padded = torch.empty(256 * 256 + 8, device="cuda", dtype=torch.bfloat16)
        k(a, a, padded[1:256 * 256 + 1].view(256, 256))  # one element (2 bytes) past an aligned start
    with pytest.raises(kiln.Error, match="takes 3 arguments"):
        k(a, a)


def test_warm_calls_do_not_recompile_and_are_cheap():
    torch = torch_mod()
    import kiln.ops
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    kiln.ops.gemm(a, a)
    torch.cuda.synchronize()
    n = 200
    t0 = time.perf_counter()
    for _ in range(n):
        kiln.ops.gemm(a, a)
    per_call = (time.perf_counter() - t0) / n
    torch.cuda.synchronize()
    print(f"kiln.ops.gemm host time per warm call (launch-bound loop): {per_call * 1e6:.1f} us")
    # Not a pass/fail on speed (BENCH.md): a recompile would take milliseconds, so this catches one.
    assert per_call < 1e-3


def test_warm_calls_read_their_own_tensors_and_check_addresses():
    """The warm path (a call like one before) launches on the new call's tensors, and still refuses
    a misaligned address."""
    torch = torch_mod()
    import kiln
    import kiln.ops
    a, b = (torch.randn(256, 512, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    c, d = (torch.randn(512, 128, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    first = kiln.ops.gemm(a, c)
    second = kiln.ops.gemm(b, d)  # same dtypes, shapes and strides: the warm path
    for out, x, y in ((first, a, c), (second, b, d)):
        ref = x.float() @ y.float()
        assert ((out.float() - ref).norm() / ref.norm()).item() < 1e-2
    padded = torch.empty(256 * 512 + 8, device="cuda", dtype=torch.bfloat16)
    shifted = padded[1:256 * 512 + 1].view(256, 512)  # the same shape and strides, 2 bytes off
    shifted.copy_(a)
    # Not the warm path's kernel (its address is 2-byte aligned): a kernel for such rows, no copy.
    out = kiln.ops.gemm(shifted, c)
    ref = a.float() @ c.float()
    assert ((out.float() - ref).norm() / ref.norm()).item() < 1e-2


def _view(torch, rows, cols, col_major, pad, offset=0):
    """A rows x cols bf16 view: row- or column-major, its leading dimension `pad` past the rows,
    `offset` elements into its buffer."""
    inner, outer = (rows, cols) if col_major else (cols, rows)
    buf = torch.randn(outer * (inner + pad) + offset, device="cuda", dtype=torch.bfloat16)
    v = buf[offset:offset + outer * (inner + pad)].view(outer, inner + pad)[:, :inner]
    return v.t() if col_major else v


@pytest.mark.parametrize("m,n,k", [(37, 29, 45), (1000, 1032, 264), (256, 50257, 512), (257, 32001, 1023)])
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
def test_gemm_every_layout_odd_sizes_and_views_without_copies(m, n, k, layout):
    """A (T: column-major) and B (T: K-major) in every layout, odd M, N, K, and views with a leading
    dimension past their rows or at an offset: kiln.ops.gemm reads them where they are."""
    torch = torch_mod()
    import kiln.ops
    a_col, b_col = layout[0] == "T", layout[1] == "T"
    for pad, offset in ((0, 0), (8, 0), (3, 1)):
        a = _view(torch, m, k, a_col, pad, offset)
        b = _view(torch, k, n, b_col, pad, offset)
        ref = a.float() @ b.float()
        out = kiln.ops.gemm(a, b)
        assert out.shape == (m, n)
        assert rel_err(out, ref) < 1e-2, (layout, pad, offset)
        out32 = kiln.ops.gemm(a, b, out_dtype=torch.float32)
        assert rel_err(out32, ref) < 1e-4, (layout, pad, offset)


def test_gemm_refuses_a_layout_it_cannot_address():
    torch = torch_mod()
    import kiln
    import kiln.ops
    x = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)[::2, ::2]  # a stride on both axes
    with pytest.raises(kiln.Error, match=r"a has strides \(128, 2\) for shape \[32, 32\]"):
        kiln.ops.gemm(x, x.contiguous())
