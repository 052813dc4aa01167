"""Kiln from Python: write tile programs, compile them to PTX and cubins, inspect what came out,
interpret them on the CPU, and call them on torch tensors (or any DLPack producer).

    import kiln
    p = kiln.Program("gemm")
    M, N, K = p.dims("M", "N", "K")
    A = p.input("A", kiln.bf16, [M, K])
    B = p.input("B", kiln.bf16, [K, N])
    C = p.output("C", kiln.bf16, [M, N])
    def body(m, n):
        acc = p.reduce(K, p.zeros(kiln.f32, [m, n]), lambda k, acc: kiln.dot(A[m, k], B[k, n], acc))
        C[m, n] = kiln.cast(kiln.bf16, acc)
    p.tile([M, N], body)
    kernel = kiln.compile(p.finish(), target="sm_90a", dims={"M": 4096, "N": 4096, "K": 4096})
    kernel.resources, kernel.ptx, kernel.launch

A memory-bound program spans a whole dim (p.span) and reduces along it (x.sum(N), kiln.max(x, N)):
kiln.programs.softmax_program() is a row softmax.

kiln.ops has gemm, scaled_mm (torch._scaled_mm's signature) and grouped_mm, registered as
torch.library custom ops (torch.ops.kiln.*) when torch is importable.
"""
from __future__ import annotations

from . import _kiln
from ._kiln import (Error, Program, Module, Tile, Tensor, Coord, Dim, Index, Scalar, dot, dot_scaled, cast, scale,
                    maximum, minimum, abs, exp, relu, gelu_tanh, gelu_erf, silu, sigmoid, exp2, log, sqrt, rsqrt,
                    tanh, erf, pow, eq, ne, where, broadcast, sum, max, min, mean, known_targets)
from .kernel import Kernel, autotune, plan_tune, compile, select, parse, interpret

dtype = _kiln.dtype
i1, i32, i64 = dtype.i1, dtype.i32, dtype.i64
f32, f16, bf16 = dtype.f32, dtype.f16, dtype.bf16
f8e4m3, f8e5m2 = dtype.f8e4m3, dtype.f8e5m2

__version__ = "0.1.0"


def kernel(fn):
    """@kiln.kernel: `fn(p)` builds the program on p, a kiln.Program named after fn; gives the
    verified kiln.Module."""
    p = Program(fn.__name__)
    fn(p)
    return p.finish()

# kiln.abs, pow, sum, max and min stay out of `from kiln import *`: they would hide Python's own.
__all__ = ["Error", "Program", "Module", "Tile", "Tensor", "Coord", "Dim", "Index", "Scalar", "Kernel", "kernel", "compile",
           "select", "autotune", "plan_tune", "parse", "interpret", "dot", "dot_scaled", "cast", "scale", "maximum", "minimum",
           "exp", "relu", "gelu_tanh",
           "gelu_erf", "silu", "sigmoid", "exp2", "log", "sqrt", "rsqrt", "tanh", "erf", "eq", "ne", "where",
           "broadcast", "mean", "known_targets", "dtype", "i1", "i32", "i64", "f32", "f16", "bf16", "f8e4m3",
           "f8e5m2", "ops"]


def __getattr__(name):
    # kiln.ops imports torch when it is there: only on first use.
    if name == "ops":
        from . import ops
        return ops
    raise AttributeError(f"module 'kiln' has no attribute {name!r}")
