#pragma once
// The tile-IR interpreter: runs a verified tile.program on the CPU with the exact dtype semantics of
// the tile dialect (src/dialects/tile/tile_ops.h). It is the numerical oracle of Kiln's tests and
// the way to run a program without a GPU.
//
// What "exact" means here, op by op (the choices the dialect contract leaves open are marked *):
//  * Storage. Tensors hold their dtype's bits (host_tensor.h). A tile holds values that are exactly
//    representable in its element type; narrow values are never kept wider than their type.
//  * Elementwise float math (add, sub, mul, div, max, min, neg, abs, relu, tile.scale and tiles
//    combined with scalars) is computed in f32 -- an IEEE single operation on the operands' values,
//    each of which is exactly a float -- and the result is rounded once, to nearest even, to the
//    tile's element type when that is narrower (bf16, f16, FP8; FP8 saturating).
//  * max / min propagate NaN (either operand NaN gives NaN) and order -0 below +0 (IEEE 754-2019
//    maximum / minimum); relu(x) = max(x, +0), so relu(NaN) = NaN and relu(-0) = +0.
//  * (*) exp, exp2, log, sqrt, rsqrt (1 / sqrt in double), tanh, erf, pow (std::pow with the
//    constant exponent), gelu_tanh, gelu_erf, silu and sigmoid are computed in double from the f32
//    input, then rounded to f32 and, when narrower, to the element type (so sqrt is the correctly
//    rounded f32 square root):
//      gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//      gelu_erf(x)  = 0.5 x (1 + erf(x / sqrt(2)))
//      sigmoid(x)   = 1 / (1 + exp(-x)),   silu(x) = x * sigmoid(x)
//    Infinities follow IEEE through these formulas: gelu(+inf) = silu(+inf) = +inf, and
//    gelu(-inf) = silu(-inf) = NaN (-inf * 0).
//  * (*) tile.dot accumulates in f32 in this order, for every output element (i, j):
//        acc = incoming accumulator
//        for k = 0, 1, ..., K-1 (the whole K range, across tile.reduce blocks):
//          p = a[i][k] * b[k][j]     (one f32 multiply: exact for bf16/f16/FP8 operands unless
//                                      it overflows or underflows f32)
//          acc = acc + p             (one f32 add, round to nearest even; never fused)
//    Blocks of K are visited in increasing order, so the order is the same for any block size.
//  * (*) tile.dot_scaled {block_k = g} (DeepGEMM's and CUTLASS's blockwise promotion): for every
//    (i, j) and every slice of g positions of the K block (from its start, in increasing order;
//    the last may be shorter), with k0 the slice's first position:
//        p  = 0; for k in the slice, increasing: p = p + a[i][k] * b[k][j]   (f32, as tile.dot)
//        s  = a_scale[i][k0] * b_scale[k0][j]                               (one f32 multiply)
//        acc = fma(p, s, acc)                                               (one f32 rounding)
//    K blocks must be multiples of g (the block of K the interpreter picks is the whole dim;
//    RunOptions::blockSizes for K must be a multiple of g). A block tensor's element (i, j) is
//    its stored element (i / block0, j / block1).
//  * (*) tile.reduce_axis: sum keeps one f32 accumulator, starts from the first element and adds
//    the others one f32 add at a time, in increasing position along the dim; max / min combine in
//    that order by the IEEE maximum / minimum above; the result is rounded once to its element
//    type. tile.cmp compares exactly (IEEE: false with a NaN, except ne), tile.select picks.
//    tile.span is the whole dim (block = the dim's extent); tile.iota the block's positions.
//  * tile.cast rounds to nearest even (FP8 saturating, like cvt.rn.satfinite). To an integer type
//    it rounds to nearest even and saturates; NaN becomes 0.
//  * (*) tile.constant values, load {other} values and scalar arguments are rounded once to their
//    type, like inputs are.
//  * (*) tile.scale with an [X] scale on an [X, X] tile scales rows (the first axis that matches).
//  * Integer scalar arithmetic (arith.*) wraps at the type's width; arith.divsi / remsi by zero is
//    a user error.
//
// Block sizes (the program's meaning does not depend on them; the interpreter picks them):
//  * a dim that tile.for_tiles tiles gets blocks of 64 rows (clamped to the dim);
//  * when a tile.group_index reads per-row ids along that dim, the block is the largest divisor of
//    its align that is at most 64, so that every block lies in one aligned chunk;
//  * every other dim (tile.reduce dims and tile.span dims included) is one block spanning the whole
//    dim, so a dot never sums over padding.
// Elements outside a tensor read as the load's {other} and are skipped by stores, exactly as the
// contract says. Tiles run in row-major order of their block coordinates (the contract allows any).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/interp/host_tensor.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"

namespace kiln::interp {

// The default memory limit of a run: 4 GiB, enough for the shapes a CPU runs in minutes.
inline constexpr int64_t kDefaultMaxMemoryBytes = int64_t(4) << 30;

struct RunRequest {
  std::map<std::string, int64_t> dims;           // every dim of the program, each > 0
  std::map<std::string, HostTensor*> tensors;    // every tile.input and tile.output, by name
  std::map<std::string, double> scalars;         // every tile.scalar, by name
};

struct RunOptions {
  // Forces the block size of a dim (tests use this to show results do not depend on it). A
  // group dim's block must divide every tile.group_index align on it.
  std::map<std::string, int64_t> blockSizes;
  // The interpreter's memory limit: tensor arguments (with the doubles a run keeps per element)
  // and any single tile above it are refused with a sentence before anything is allocated.
  int64_t maxMemoryBytes = kDefaultMaxMemoryBytes;
  // When not empty: only these instances of the tile.for_tiles body run (flat indices, row-major
  // over (batch, block of dims[0], block of dims[1], ...)); outputs outside them keep what they
  // held. Sampled verification (interp/tile_sampler.h) runs a few tiles of a large problem.
  std::vector<int64_t> instances;
};

// Runs `program` (a tile.program) and writes its outputs into the output HostTensors. Verifies the
// program first. Returns false after reporting user errors to `diag`: the program does not verify,
// a dim is missing, unknown or not positive, a
// tensor or tile is too large for int64 or over opts.maxMemoryBytes, a tensor is missing, unknown, or its dtype, shape or
// byte count differs from its declaration, a scalar is missing or unknown, or group ids break the
// tile.group_index contract (an aligned chunk of rows spans two groups, a group's rows are not
// contiguous, or an id is outside the tensor axis it indexes). Outputs may be partly written
// when an error is found during the run.
bool run(const ir::Operation& program, RunRequest& req, ir::DiagnosticEngine& diag, const RunOptions& opts = {});

// The fp64 reference of a program: the same run, except that every float operation (elementwise
// math, dot, scale, transcendental functions) is done in double and never rounded, and casts to
// float types are the identity. Values that enter the program keep their stored, rounded values:
// input tensor elements, scalar arguments, constants and {other}. Outputs are not rounded either:
// each output's elements are written, in storage order, to `outputs[name]` (which starts as the
// output tensor's current contents), and the output HostTensors are left untouched.
// It answers "what would this program compute with no rounding after its inputs", which measures
// the rounding error of run() and of compiled kernels.
bool runReference(const ir::Operation& program, RunRequest& req, std::map<std::string, std::vector<double>>& outputs,
                  ir::DiagnosticEngine& diag, const RunOptions& opts = {});

}  // namespace kiln::interp
