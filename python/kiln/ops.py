"""Ready GEMMs on torch tensors: kiln.ops.gemm, kiln.ops.scaled_mm (torch._scaled_mm's signature)
and kiln.ops.grouped_mm, each compiled once per dtype, layout and schedule, with the schedule Kiln
picks for the call's shape (kiln.select), and launched on the current stream. They are also
torch.library custom ops, torch.ops.kiln.gemm / scaled_mm / grouped_mm, with fake (meta)
implementations, so torch.compile graphs hold them without breaks."""

import atexit
import os
from typing import Optional

import torch

from . import _kiln
from .kernel import Error, _TORCH_DTYPES, _gpu_target, compile
from .programs import gemm_program, grouped_mm_program, ragged_mm_program, scaled_mm_program

_PROGRAMS: dict = {}  # (kind, dtypes, layout) -> Module
_PICKS: dict = {}     # (program key, device, dims) -> Kernel: a warm call's one lookup


def _kiln_dtype(t: torch.dtype, what: str):
    d = _TORCH_DTYPES.get(str(t)[6:])
    if d is None:
        raise Error(f"{what} is {t}, which Kiln has no dtype for")
    return d


def _program(key, build):
    m = _PROGRAMS.get(key)
    if m is None:
        m = _PROGRAMS[key] = build()
    return m


def _kernel(key, build, dims: dict, device, alignments: Optional[dict] = None):
    """The kernel of program `key` (built by `build` once) at these dims on this device. A shape
    seen before is one lookup; a new one asks kiln.select, and compiles only for a new schedule
    (kiln.compile caches by program, target and config). With `alignments` (tensor -> bytes its
    address is aligned to) the pick is the family's fitted to them and to the dims' rows, not a
    measured one (which was timed on 16-byte rows)."""
    pick_key = (key, device, tuple(dims.values()), None if alignments is None else tuple(alignments.values()))
    k = _PICKS.get(pick_key)
    if k is None:
        program, target = _program(key, build), _target(device)
        if alignments is None:
            k = compile(program, target=target, dims=dims)
        else:
            pick = _kiln.select(program, target, dims, alignments)
            k = compile(program, target=target, config=pick["config"])
        _PICKS[pick_key] = k
    return k


_WARM: dict = {}      # a call's dtypes, shapes, strides and device -> (Kernel, dims, ...): the warm path


atexit.register(_WARM.clear)  # kernels held at exit would be reported as leaked (kernel.py's _CACHE)
atexit.register(_PICKS.clear)
atexit.register(_PROGRAMS.clear)


def _remember(key, value):
    if len(_WARM) >= 4096:  # bounded: shapes vary with the batch
        _WARM.clear()
    _WARM[key] = value


_TARGETS: dict = {}


def _target(device) -> str:
    t = _TARGETS.get(device)
    if t is None:
        with torch.cuda.device(device):
            t = _TARGETS[device] = _gpu_target()
        if t is None:
            raise Error(f"{device} is not a GPU Kiln compiles for (known: {', '.join(_kiln.known_targets())})")
    return t


def _b_kmajor(b: torch.Tensor) -> bool:
    return b.dim() == 2 and b.stride(0) == 1 and b.stride(1) == b.shape[0] and not b.is_contiguous()


def _matrix_layout(x: torch.Tensor, what: str):
    """(column-major, leading dimension) of a 2-D tensor whose rows (or columns) are contiguous and
    at least as far apart as they are long: a contiguous tensor, its transpose, a slice of either,
    a padded buffer. Anything else (a stride on both axes) is refused, naming the argument."""
    rows, cols = x.shape
    s0, s1 = x.stride()
    if (s1 == 1 or cols == 1) and (rows == 1 or s0 >= cols):
        return False, s0 if rows > 1 else cols
    if (s0 == 1 or rows == 1) and (cols == 1 or s1 >= rows):
        return True, s1 if cols > 1 else rows
    raise Error(f"{what} has strides {x.stride()} for shape {list(x.shape)}: gemm reads a matrix whose rows or "
                "columns are contiguous and at least as far apart as they are long (a slice, a transpose or a "
                f"padded buffer); call {what}.contiguous()")


def _address_alignment(x: torch.Tensor) -> int:
    """The bytes (a power of two, at most 16) the tensor's address is aligned to."""
    ptr, a = x.data_ptr(), 16
    while a > 1 and ptr % a:
        a //= 2
    return a


def gemm(a: torch.Tensor, b: torch.Tensor, out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    """a @ b for 16-bit a [M, K] and b [K, N], each row- or column-major (x.t()), dense or a strided
    view (a slice, a padded buffer: no copy is made); out in out_dtype (default a's dtype;
    bfloat16, float16 or float32). Any M, N, K: rows whose length is not a multiple of 8 get
    narrower loads (docs/layouts.md)."""
    # A call like one before (same dtypes, shapes, strides, address alignment and device) skips the
    # checks and the schedule lookup: its kernel and dims are one dict lookup away.
    warm_key = (a.dtype, b.dtype, out_dtype, a.shape, b.shape, a.stride(), b.stride(), a.device,
                a.data_ptr() % 16, b.data_ptr() % 16)
    warm = _WARM.get(warm_key)
    if warm is not None:
        kernel, dims, out_shape, out_dt = warm
        out = torch.empty(out_shape, dtype=out_dt, device=a.device)
        kernel._launch_checked((a, b, out), dims, a.device.index)
        return out
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise Error(f"gemm multiplies a [M, K] by b [K, N]; got {list(a.shape)} and {list(b.shape)}")
    out_dtype = out_dtype or a.dtype
    M, K = a.shape
    N = b.shape[1]
    a_col, lda = _matrix_layout(a, "a")
    b_kmajor, ldb = _matrix_layout(b, "b")
    a_strided, b_strided = lda != (M if a_col else K), ldb != (K if b_kmajor else N)
    key = ("gemm", a.dtype, b.dtype, out_dtype, a_col, a_strided, b_kmajor, b_strided)
    build = lambda: gemm_program(_kiln_dtype(a.dtype, "a"), _kiln_dtype(b.dtype, "b"),  # noqa: E731
                                 _kiln_dtype(out_dtype, "out_dtype"), b_kmajor, a_colmajor=a_col,
                                 a_strided=a_strided, b_strided=b_strided)
    out = torch.empty((M, N), dtype=out_dtype, device=a.device)
    dims = {"M": M, "N": N, "K": K}
    if a_strided:
        dims["lda"] = lda
    if b_strided:
        dims["ldb"] = ldb
    alignments = {"A": _address_alignment(a), "B": _address_alignment(b)}
    # Rows the measured picks were not made for (a layout other than row-major A, a leading
    # dimension, rows or an address off 16 bytes) take the family's pick fitted to them.
    rows16 = all(x * 2 % 16 == 0 for x in (K, N, lda, ldb)) and min(alignments.values()) == 16
    fitted = a_col or a_strided or b_strided or not rows16
    kernel = _kernel(key, build, dims, a.device, alignments if fitted else None)
    kernel(a, b, out)  # checks every argument, then launches
    _remember(warm_key, (kernel, dims, (M, N), out_dtype))
    return out


def _scale_vector(s: torch.Tensor, n: int, what: str) -> torch.Tensor:
    """A tensorwise (one element) or rowwise/columnwise ([n, 1] / [1, n]) f32 scale as [n]."""
    if s.numel() == 1:
        return s.reshape(1).expand(n).contiguous()  # tensorwise: one small copy
    if s.numel() != n or not s.is_contiguous():
        raise Error(f"{what} has shape {list(s.shape)}: give one element (tensorwise) or {n} contiguous ones (rowwise)")
    return s.reshape(n)


def _m_major(s: torch.Tensor) -> torch.Tensor:
    """A 2-D tensor with its first axis contiguous (strides (1, rows)): a view when it is, else one
    small copy."""
    return s if s.stride(0) == 1 and (s.shape[1] == 1 or s.stride(1) == s.shape[0]) else s.t().contiguous().t()


def _scales(scale_a: torch.Tensor, scale_b: torch.Tensor, M: int, N: int, K: int, force: Optional[str] = None):
    """The scaling mode torch._scaled_mm's scale shapes ask for, and the scales as Kiln's program
    of that mode takes them (kiln.programs.scaled_mm_program):
      tensorwise   scale_a, scale_b with one element each
      rowwise      scale_a [M] / [M, 1] (or one element), scale_b [N] / [1, N] (or one element)
      block_1x128_128x128  scale_a [M, ceil(K/128)] (M-major, torch's strides (1, M)); scale_b
                   [roundup(ceil(K/128), 4), ceil(N/128)] with strides (1, rows) as torch and
                   cuBLASLt take it, or DeepGEMM's contiguous [ceil(N/128), ceil(K/128)]
      block_1x128_1x128    scale_a as above; scale_b [N, ceil(K/128)] with strides (1, N)
    Argument errors name the argument. force="rowwise" takes tensorwise scales as vectors."""
    for name, t in (("scale_a", scale_a), ("scale_b", scale_b)):
        if t.dtype != torch.float32:
            raise Error(f"{name} is {t.dtype}; scales are float32")
        if t.device != scale_a.device:
            raise Error(f"{name} is on {t.device}, scale_a on {scale_a.device}")
    kb, nb = -(-K // 128), -(-N // 128)
    kb4 = -(-kb // 4) * 4
    sb = tuple(scale_b.shape)
    if scale_a.numel() == 1 and scale_b.numel() == 1 and force != "rowwise":
        return "tensorwise", scale_a.reshape(1), scale_b.reshape(1)
    if scale_b.dim() == 2 and sb in ((kb, nb), (kb4, nb)) and scale_b.stride(0) == 1:  # torch / cuBLASLt
        mode, b = "block_1x128_128x128", scale_b[:kb]
    elif scale_b.dim() == 2 and sb == (nb, kb) and scale_b.is_contiguous():             # DeepGEMM's sfb
        mode, b = "block_1x128_128x128", scale_b.t()
    elif scale_b.dim() == 2 and sb == (N, kb) and scale_b.stride(0) == 1:               # torch's 1x128
        mode, b = "block_1x128_1x128", scale_b.t()
    else:
        return "rowwise", _scale_vector(scale_a, M, "scale_a"), _scale_vector(scale_b, N, "scale_b")
    if scale_a.dim() != 2 or tuple(scale_a.shape) != (M, kb):
        raise Error(f"scale_a has shape {list(scale_a.shape)}: with scale_b's {mode} scales it must be [M, ceil(K/128)] "
                    f"= [{M}, {kb}], one scale per row and 128 columns of a")
    a = _m_major(scale_a)
    if mode == "block_1x128_128x128":
        b = b if b.stride(0) == 1 and (nb == 1 or b.stride(1) == kb) else b.t().contiguous().t()  # rows of kb
    return mode, a, b.contiguous() if mode == "block_1x128_1x128" else b


def scaled_mm(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
              bias: Optional[torch.Tensor] = None, scale_result: Optional[torch.Tensor] = None,
              out_dtype: Optional[torch.dtype] = None, use_fast_accum: bool = False) -> torch.Tensor:
    """torch._scaled_mm: a float8 (e4m3fn or e5m2) [M, K] row-major, b [K, N] column-major
    (K-major), scales in any of torch's modes (tensorwise, rowwise, DeepSeek-V3's blockwise
    1x128 x 128x128 and 1x128 x 1x128: _scales says the shapes), optional bias [N] (rowwise and
    tensorwise), out_dtype bfloat16 (default) or float32. use_fast_accum is accepted and ignored:
    Kiln sums FP8 products in f32 every K step (cuBLASLt's default), which is at least as accurate.
    scale_result (FP8 outputs) is not supported."""
    warm_key = ("scaled_mm", a.dtype, b.dtype, a.shape, b.shape, a.stride(), b.stride(), scale_a.dtype, scale_a.shape,
                scale_a.stride(), scale_b.dtype, scale_b.shape, scale_b.stride(), out_dtype, a.device,
                None if bias is None else (bias.dtype, bias.shape, bias.stride()), scale_result is None)
    warm = _WARM.get(warm_key)
    if warm is not None:
        kernel, dims, (M, N), out_dt, scaling = warm
        out = torch.empty((M, N), dtype=out_dt, device=a.device)
        _, sa, sb = _scales(scale_a, scale_b, M, N, dims["K"], scaling)
        args = [a, b, sa, sb] + ([bias] if bias is not None else []) + [out]
        kernel._launch_checked(args, dims, a.device.index)
        return out
    if scale_result is not None:
        raise Error("scaled_mm: scale_result (an FP8 output) is not supported; use a bfloat16 or float32 out_dtype")
    fp8 = (torch.float8_e4m3fn, torch.float8_e5m2)
    for name, t in (("a", a), ("b", b)):
        if t.dtype not in fp8:
            raise Error(f"scaled_mm: {name} is {t.dtype}; it multiplies float8_e4m3fn or float8_e5m2 operands")
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise Error(f"scaled_mm multiplies a [M, K] by b [K, N]; got {list(a.shape)} and {list(b.shape)}")
    if not _b_kmajor(b):
        raise Error("scaled_mm: b must be column-major (K-major), as torch._scaled_mm requires: pass x.t() of a "
                    "contiguous [N, K] tensor")
    out_dtype = out_dtype or torch.bfloat16
    M, K = a.shape
    N = b.shape[1]
    scaling, sa, sb = _scales(scale_a, scale_b, M, N, K)
    if bias is not None and scaling.startswith("block"):
        raise Error(f"scaled_mm: bias with {scaling} scales is not supported; add it to the output")
    dims = {"M": M, "N": N, "K": K}

    def kernel_for(mode):
        key = ("scaled_mm", mode, a.dtype, b.dtype, out_dtype, None if bias is None else bias.dtype)
        build = lambda: scaled_mm_program(_kiln_dtype(out_dtype, "out_dtype"),  # noqa: E731
                                          None if bias is None else _kiln_dtype(bias.dtype, "bias"), mode,
                                          _kiln_dtype(a.dtype, "a"), _kiln_dtype(b.dtype, "b"))
        return _kernel(key, build, dims, a.device)
    try:
        kernel = kernel_for(scaling)
    except Error:
        if scaling != "tensorwise":
            raise
        # Where no kernel applies tensorwise scales (a target whose family has none), the rowwise
        # one takes them as vectors.
        scaling, sa, sb = "rowwise", _scale_vector(scale_a, M, "scale_a"), _scale_vector(scale_b, N, "scale_b")
        kernel = kernel_for(scaling)
    out = torch.empty((M, N), dtype=out_dtype, device=a.device)
    args = [a, b, sa, sb] + ([bias] if bias is not None else [])
    kernel(*args, out)  # checks every argument, then launches
    _remember(warm_key, (kernel, dims, (M, N), out_dtype, scaling))
    return out


def _check_offsets(offs: torch.Tensor, groups: int, extent: int, dim: str, multiple: int = 1, why: str = ""):
    """The offsets' shape and dtype, always; their values too when they are on the host (no
    synchronisation) or when KILN_CHECK_OFFSETS=1 asks for the device-to-host copy. multiple: every
    group's size must be a multiple of it (`why` says whose rule that is)."""
    if offs.dtype != torch.int32 or offs.dim() != 1 or offs.shape[0] != groups:
        raise Error(f"grouped_mm: offs must be int32 [G] = [{groups}] (each group's cumulative end along {dim}); "
                    f"got {offs.dtype} {list(offs.shape)}")
    if offs.is_cuda and os.environ.get("KILN_CHECK_OFFSETS") != "1":
        return
    ends = offs.tolist()
    for g, e in enumerate(ends):
        if e < 0 or e > extent:
            raise Error(f"grouped_mm: offs must lie in [0, {dim}] = [0, {extent}]: group {g} ends at {e}")
        if g and e < ends[g - 1]:
            raise Error(f"grouped_mm: offs must not decrease: group {g} ends at {e}, before group {g - 1}'s end "
                        f"{ends[g - 1]}")
        if e % multiple:
            raise Error(f"grouped_mm: offs must be multiples of {multiple} ({why}): group {g} ends at {e}")


_RAGGED_UNAVAILABLE: dict = {}  # program key -> why no kernel compiles for it (asked once per key)


def _fp8_kgrouped_scales(a, b, scale_a, scale_b, M, N, K):
    """FP8 groups along K: the operands K-major and the 1x128 scales as torch._scaled_mm's
    blockwise 1x128 takes them (scale_a [M, ceil(K/128)], scale_b [N, ceil(K/128)]), returned as the
    program stores them ([kb][M] and [kb][N]). Errors name the argument."""
    if scale_a is None or scale_b is None:
        raise Error("grouped_mm: float8 operands need scale_a [M, ceil(K/128)] and scale_b [N, ceil(K/128)] "
                    "(1x128 blocks along K)")
    if a.stride(1) != 1 or a.stride(0) != K:
        raise Error(f"grouped_mm: float8 a must be row-major [M, K] (tokens contiguous, as wgmma reads 8-bit "
                    f"operands); got strides {list(a.stride())}")
    if not _b_kmajor(b):
        raise Error("grouped_mm: float8 b must be column-major [K, N] (K-major): pass x.t() of a contiguous [N, K]")
    kb = -(-K // 128)
    for name, t, rows in (("scale_a", scale_a, M), ("scale_b", scale_b, N)):
        if t.dtype != torch.float32 or t.device != a.device or tuple(t.shape) != (rows, kb):
            raise Error(f"grouped_mm: {name} must be float32 [{'M' if name == 'scale_a' else 'N'}, ceil(K/128)] = "
                        f"[{rows}, {kb}] on {a.device} (one scale per row and 128 tokens); got {t.dtype} "
                        f"{list(t.shape)} on {t.device}")
    return _m_major(scale_a), scale_b.t().contiguous()


def grouped_mm(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor, align: int = 64,
               out_dtype: Optional[torch.dtype] = None, scale_a: Optional[torch.Tensor] = None,
               scale_b: Optional[torch.Tensor] = None) -> torch.Tensor:
    """torch._grouped_mm with offsets (int32 [G], each group's cumulative end):
      a [M, K] (row-major) x b [G, K, N] -> [M, N]: rows offs[g-1]:offs[g] of a times b[g] (MoE);
      a [M, K] x b [K, N] (2D x 2D) -> [G, M, N]: columns offs[g-1]:offs[g] of a times those rows of
      b (weight gradients; a is x.t() of a row-major [K, M]).
    Rows (columns) past offs[-1] belong to no group: those output rows are left unwritten (2D x 3D)
    and an empty group gives zeros (2D x 2D). Groups are scheduled on the device from the offsets,
    with no synchronisation, where Kiln has a kernel for ragged groups; until then groups along M
    whose sizes are multiples of `align` rows run the aligned kernel (which reads offs on the host).
    FP8 (float8_e4m3fn) 2D x 2D, the blockwise weight gradient: a [M, K] row-major and b [K, N]
    column-major (both K-major), scale_a [M, ceil(K/128)] and scale_b [N, ceil(K/128)] (1x128 blocks
    along K), every group's tokens a multiple of 128 (checked where offs are on the host or with
    KILN_CHECK_OFFSETS=1; docs/grouped-gemm.md says what the kernel does otherwise)."""
    if a.dim() != 2 or offs.dim() != 1 or b.dim() not in (2, 3):
        raise Error(f"grouped_mm takes a [M, K] with b [G, K, N] or [K, N], and offs [G]; got {list(a.shape)}, "
                    f"{list(b.shape)}, {list(offs.shape)}")
    if b.dtype != a.dtype:
        raise Error(f"grouped_mm: b is {b.dtype}, a is {a.dtype}; they must match")
    M, K = a.shape
    along = "M" if b.dim() == 3 else "K"
    G = b.shape[0] if along == "M" else offs.shape[0]
    if (b.shape[1] if along == "M" else b.shape[0]) != K:
        raise Error(f"grouped_mm: a is [M, K] = {list(a.shape)} but b is {list(b.shape)}: their K differ")
    fp8 = a.dtype in (torch.float8_e4m3fn, torch.float8_e5m2)
    if fp8 and along != "K":
        raise Error("grouped_mm: float8 operands are taken 2D x 2D (groups along K, the weight gradient) only")
    if not fp8 and (scale_a is not None or scale_b is not None):
        raise Error(f"grouped_mm: scale_a and scale_b go with float8 operands; a is {a.dtype}")
    _check_offsets(offs, G, M if along == "M" else K, along, 128 if fp8 else 1,
                   "float8 groups along K hold whole 1x128 scale blocks")
    N = b.shape[-1]
    scales = _fp8_kgrouped_scales(a, b, scale_a, scale_b, M, N, K) if fp8 else ()
    out_dtype = out_dtype or (a.dtype if along == "M" else torch.float32)
    b_kmajor = (along == "M" and b.stride(1) == 1 and b.stride(2) == K) or fp8
    key = ("ragged_mm", along, a.dtype, out_dtype, b_kmajor)
    dims = {"G": G, "M": M, "N": N, "K": K}
    out = torch.empty((M, N) if along == "M" else (G, M, N), dtype=out_dtype, device=a.device)
    if key not in _RAGGED_UNAVAILABLE:
        build = lambda: ragged_mm_program(_kiln_dtype(a.dtype, "a"), _kiln_dtype(out_dtype, "out_dtype"),  # noqa
                                          along, b_kmajor)
        try:
            kernel = _kernel(key, build, dims, a.device)
        except Error as e:  # no strategy lowers ragged groups on this device yet
            _RAGGED_UNAVAILABLE[key] = str(e)
        else:
            kernel(a, b, *scales, offs, out)
            return out
    if along == "K" or out_dtype != a.dtype:
        raise Error(f"grouped_mm: no kernel runs these groups on {a.device} yet: {_RAGGED_UNAVAILABLE[key]}")
    return _aligned_grouped_mm(a, b.contiguous(), offs, align, out)


def _aligned_grouped_mm(a, b, offs, align, out):
    """Groups along M whose sizes are multiples of `align`, through per-row group ids (which reads
    offs on the host: a synchronisation)."""
    M, K = a.shape
    G, _, N = b.shape
    ends = offs.tolist()
    if any(e % align for e in ends) or ends[-1] != M or sorted(ends) != ends:
        raise Error(f"grouped_mm: offs {ends} must rise to M = {M} in multiples of {align} rows (the aligned kernel; "
                    f"no ragged kernel runs here yet: {_RAGGED_UNAVAILABLE.get(('ragged_mm', 'M', a.dtype, a.dtype, False), '')})")
    rows = torch.arange(M, device=a.device, dtype=torch.int32)
    group_ids = torch.searchsorted(offs.to(torch.int32), rows, right=True).to(torch.int32)
    key = ("grouped_mm", a.dtype, align)
    build = lambda: grouped_mm_program(_kiln_dtype(a.dtype, "a"), align)  # noqa: E731
    _kernel(key, build, {"G": G, "M": M, "N": N, "K": K}, a.device)(a, b, group_ids, out)
    return out


# torch.library custom ops: opaque to torch.compile's tracer, with fake implementations giving the
# output's shape and dtype, so a compiled graph calls them without a graph break.
@torch.library.custom_op("kiln::gemm", mutates_args=())
def _gemm_op(a: torch.Tensor, b: torch.Tensor, out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    return gemm(a, b, out_dtype)


@_gemm_op.register_fake
def _(a, b, out_dtype=None):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype or a.dtype)


@torch.library.custom_op("kiln::scaled_mm", mutates_args=())
def _scaled_mm_op(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
                  bias: Optional[torch.Tensor] = None, out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    return scaled_mm(a, b, scale_a, scale_b, bias=bias, out_dtype=out_dtype)


@_scaled_mm_op.register_fake
def _(a, b, scale_a, scale_b, bias=None, out_dtype=None):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype or torch.bfloat16)


@torch.library.custom_op("kiln::grouped_mm", mutates_args=())
def _grouped_mm_op(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    return grouped_mm(a, b, offs)


@_grouped_mm_op.register_fake
def _(a, b, offs):
    if b.dim() == 2:
        return a.new_empty((offs.shape[0], a.shape[0], b.shape[1]), dtype=torch.float32)
    return a.new_empty((a.shape[0], b.shape[2]), dtype=a.dtype)
