#include "tests/unit/schedule/sm90_sim_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "examples/examples.h"
#include "kiln/compile.h"
#include "kiln/float_formats.h"
#include "kiln/ir/parser.h"
#include "kiln/kernel.h"
#include "kiln/program_builder.h"
#include "kiln/target.h"
#include "ops/fp8_programs.h"
#include "schedule/config.h"
#include "tests/unit/testing/seeded_inputs.h"
#include "tests/unit/testing/ws_sim.h"

namespace kiln::sm90sim {
namespace {

constexpr uint16_t kPoison = 0xFFC1;
constexpr int64_t kGuard = 64;

template <typename T>
std::vector<uint8_t> bytesOf(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Problem::scaled's program: C = cast(bf16, scale(A·B, s(m)) + bias(n)).
std::unique_ptr<ir::Module> scaledGemm() {
  ProgramBuilder p("gemm_scaled");
  auto [M, N, K] = p.dims("M", "N", "K");
  auto A = p.input("A", bf16, {M, K});
  auto B = p.input("B", bf16, {K, N});
  auto s = p.input("s", f32, {M});
  auto bias = p.input("bias", f32, {N});
  auto C = p.output("C", bf16, {M, N});
  p.tile({M, N}, [&](Coord m, Coord n) {
    Tile acc = p.zeros(f32, {m, n});
    p.reduce(K, [&](Coord k) { acc = dot(A(m, k), B(k, n), acc); });
    C(m, n) = cast(bf16, scale(acc, s(m)) + bias(n));
  });
  return p.finish();
}

}  // namespace

void check(const std::string& configText, const Problem& p,
           const std::function<void(ir::Operation& kernel)>& mutate, const std::string& expectError,
           std::vector<int64_t>* evictFirstBytes, CacheLines* lines) {
  Config config = Config::parse(configText);
  const ops::Fp8Scaling blockMode =
      p.blockwise == 1 ? ops::Fp8Scaling::Block1x128x128x128 : ops::Fp8Scaling::Block1x128x1x128;
  auto program = p.blockwise    ? ops::fp8GemmProgram({blockMode}, "fp8_blockwise")
                 : p.tensorwise ? ops::fp8GemmProgram({ops::Fp8Scaling::Tensorwise}, "fp8_tensorwise")
                 : p.fp8     ? examples::fp8RowwiseGemm()
                 : p.scaled  ? scaledGemm()
                 : p.residual ? examples::gemmBiasSiluResidual()
                 : p.f16   ? examples::gemmF16(p.kMajor)
                 : p.batch ? examples::batchedGemm()
                 : p.groups ? examples::groupedGemm()
                 : p.kMajor ? examples::gemmKMajorB()
                            : examples::gemmBf16();
  auto decode = p.f16 ? f16BitsToFloat : bf16BitsToFloat;
  ir::DiagnosticEngine diag;
  auto r = compile(*program, Target::sm90a(), config, diag);
  ASSERT_TRUE(r) << diag.str();
  auto kern = ir::parseModule(r->kernIr, diag);
  ASSERT_TRUE(kern) << diag.str();
  std::map<std::string, int64_t> dims = {{"M", p.m}, {"N", p.n}, {"K", p.k}};
  int64_t nb = std::max<int64_t>(1, p.batch);
  if (p.batch) dims["B"] = p.batch;
  if (p.groups) dims["G"] = p.groups;
  // Problem::groups: each 64-row block's group, one of G + 1 ids (G is out of range).
  std::vector<int32_t> ids(size_t(p.m));
  for (int64_t i = 0; i < p.m; ++i) ids[size_t(i)] = int32_t(((i / 64) * 3 + 1) % (p.groups + 1));
  const int64_t nbB = p.groups ? p.groups : std::max<int64_t>(1, p.batch);  // B's matrices
  ASSERT_TRUE(r->launch.validate(dims, diag)) << diag.str();

  testing::SeededInputs inputs(uint32_t(p.m * 131 + p.n * 7 + p.k));
  auto a = p.f16 ? inputs.f16(size_t(nb * p.m * p.k)) : inputs.bf16(size_t(nb * p.m * p.k));
  auto b = p.f16 ? inputs.f16(size_t(nbB * p.k * p.n)) : inputs.bf16(size_t(nbB * p.k * p.n));
  // Problem::fp8: e4m3 operands (B stored [N][K]), decoded for the reference below.
  std::vector<uint8_t> a8, b8;
  if (p.fp8) a8 = inputs.e4m3(size_t(p.m * p.k)), b8 = inputs.e4m3(size_t(p.n * p.k));
  auto operand = [&](bool isA, size_t i) {
    if (p.fp8) return double(fp8BitsToFloat((isA ? a8 : b8)[i], Fp8Format::E4M3));
    return double(decode((isA ? a : b)[i]));
  };
  testing::GlobalMemory mem;
  uint64_t da = p.fp8 ? mem.add(a8) : mem.add(bytesOf(a)), db = p.fp8 ? mem.add(b8) : mem.add(bytesOf(b));
  uint64_t dc = mem.add(bytesOf(std::vector<uint16_t>(size_t(nb * p.m * p.n + kGuard), kPoison)));
  // Problem::scaled: row scales around 1 and biases around 0, distinct per row and column over
  // periods (97, 89) that no tile, share or piece height (multiples of 8 up to 256) is a multiple of.
  // Problem::fp8 scales columns by factors around 1 over the same period as the biases.
  std::vector<float> rowScale(size_t(p.m)), colBias(size_t(p.n));
  for (int64_t i = 0; i < p.m; ++i) rowScale[size_t(i)] = 0.5f + float(i % 97) * 0.01f;
  for (int64_t j = 0; j < p.n; ++j) colBias[size_t(j)] = p.fp8 ? 0.6f + float(j % 89) * 0.01f : float(j % 89) * 0.05f - 2.2f;
  // Problem::blockwise: scale_a stored [K/128][M], scale_b [N/128][K/128] (mode 1) or [K/128][N] (mode 2),
  // every block's value distinct over periods no tile is a multiple of.
  const int64_t kb = (p.k + 127) / 128, nbk = (p.n + 127) / 128;
  auto blockA = [&](int64_t i, int64_t s) { return 0.5f + float((i * 7 + s * 13) % 97) * 0.01f; };
  auto blockB = [&](int64_t s, int64_t j) {
    return p.blockwise == 1 ? 0.6f + float(((j / 128) * 5 + s * 3) % 89) * 0.01f : 0.6f + float((j * 3 + s * 11) % 89) * 0.01f;
  };
  if (p.blockwise) {
    rowScale.assign(size_t(kb * p.m), 0);
    colBias.assign(size_t(p.blockwise == 1 ? nbk * kb : kb * p.n), 0);
    for (int64_t s = 0; s < kb; ++s) {
      for (int64_t i = 0; i < p.m; ++i) rowScale[size_t(s * p.m + i)] = blockA(i, s);
      if (p.blockwise == 1)
        for (int64_t c = 0; c < nbk; ++c) colBias[size_t(c * kb + s)] = blockB(s, c * 128);
      else
        for (int64_t j = 0; j < p.n; ++j) colBias[size_t(s * p.n + j)] = blockB(s, j);
    }
  }
  bool vectors = p.scaled || p.fp8 || p.residual;
  uint64_t ds = vectors ? mem.add(bytesOf(rowScale)) : 0, dbias = vectors ? mem.add(bytesOf(colBias)) : 0;
  // Problem::residual: R [M, N], random BF16.
  auto resid = p.residual ? inputs.bf16(size_t(p.m * p.n)) : std::vector<uint16_t>{};
  uint64_t dr = p.residual ? mem.add(bytesOf(resid)) : 0;
  uint64_t dids = p.groups ? mem.add(bytesOf(ids)) : 0;
  // The tensor arguments in the program's order (the tensor maps' addresses by it).
  std::vector<uint64_t> tensors = p.residual ? std::vector<uint64_t>{da, db, dbias, dr, dc}
                                  : vectors    ? std::vector<uint64_t>{da, db, ds, dbias, dc}
                                  : p.groups ? std::vector<uint64_t>{da, db, dids, dc}
                                             : std::vector<uint64_t>{da, db, dc};
  std::map<std::string, uint64_t> byName = {{"A", da},       {"B", db},       {"C", dc}, {"s", ds}, {"bias", dbias},
                                            {"group_ids", dids}, {"R", dr},
                                            {"scale_a", ds}, {"scale_b", dbias}};

  testing::WsLaunch launch;
  int64_t units = r->launch.gridFor(dims)[0];  // tiles (times split_k's slices, or stream_k's K steps)
  launch.blocks = p.blocks ? p.blocks : uint32_t(std::min<int64_t>(units, 4));
  uint64_t flags = 0;
  size_t flagCount = 0;
  std::vector<std::pair<uint64_t, uint64_t>> workspace;  // split_k's and stream_k's buffers: address, bytes
  launch.kernel = kern->body().front();
  if (mutate) mutate(*kern->body().front());
  auto sig = signatureOf(*program->body().front(), r->launch);
  for (const auto& prm : r->launch.params) {
    if (prm.kind == KernelParam::Kind::Pointer) {
      launch.args.push_back(byName.at(prm.name));
    } else if (prm.kind == KernelParam::Kind::TensorMap) {  // A, B and (epilogue=tma) C
      launch.args.push_back(launch.maps.size());
      launch.maps.push_back(tensorMapDescFor(prm, sig, tensors, dims));
    } else if (prm.kind == KernelParam::Kind::Workspace) {  // split_k: flags zero, partials poisoned
      auto [flagBytes, partialBytes] = r->launch.workspaceBytes(dims, int(launch.blocks));
      if (prm.name == "ws_flags") {
        flags = mem.add(std::vector<uint8_t>(size_t(flagBytes), 0));
        launch.args.push_back(flags);
        flagCount = size_t(flagBytes / 4);
        workspace.push_back({flags, uint64_t(flagBytes)});
      } else {
        launch.args.push_back(mem.add(std::vector<uint8_t>(size_t(partialBytes), 0xFF)));
        workspace.push_back({launch.args.back(), uint64_t(partialBytes)});
      }
    } else {
      launch.args.push_back(uint32_t(int32_t(dims.at(prm.name))));
    }
  }
  if (evictFirstBytes) {
    evictFirstBytes->assign(launch.maps.size(), 0);
    launch.evictFirstBytes = evictFirstBytes;
  }
  if (lines) {
    lines->prefetched.assign(launch.blocks, {});
    lines->loaded.assign(launch.blocks, {});
    launch.prefetchedLines = &lines->prefetched;
    launch.loadedLines = &lines->loaded;
  }
  std::string err = testing::simulateWarpSpecialized(launch, mem);
  if (!expectError.empty()) {
    EXPECT_NE(err.find(expectError), std::string::npos) << configText << ": " << err;
    return;
  }
  ASSERT_EQ(err, "") << configText;
  if (lines)  // only the program's tensors: not split-K's hand-over through the workspace
    for (auto& block : lines->loaded)
      std::erase_if(block, [&](uint64_t line) {
        for (auto [at, bytes] : workspace)
          if (line * 128 + 127 >= at && line * 128 < at + bytes) return true;
        return false;
      });

  std::vector<uint16_t> c(size_t(nb * p.m * p.n + kGuard));
  std::memcpy(c.data(), mem.at(dc).data(), c.size() * 2);
  int bad = 0;
  for (int64_t bi = 0; bi < nb; ++bi)
    for (int64_t i = 0; i < p.m && bad < 5; ++i)
      for (int64_t j = 0; j < p.n && bad < 5; ++j) {
        double acc = 0;
        const size_t a0 = size_t(bi * p.m * p.k);
        // Grouped: the row's group picks B's matrix; an id past G reads zeros.
        const int64_t group = p.groups ? ids[size_t(i)] : bi;
        if (p.groups && group >= p.groups) {
          double got = decode(c[size_t(i * p.n + j)]);
          if (got != 0) {
            ++bad;
            ADD_FAILURE() << "[" << configText << "] C[" << i << "][" << j << "] = " << got
                          << " for a row of an out-of-range group, expected 0";
          }
          continue;
        }
        const size_t b0 = size_t(group * p.k * p.n);
        for (int64_t kk = 0; kk < p.k; ++kk) {
          double t = operand(true, a0 + size_t(i * p.k + kk)) *
                     operand(false, b0 + size_t(p.kMajor || p.fp8 ? j * p.k + kk : kk * p.n + j));
          // Problem::blockwise: each slice of 128 along K scaled by its own blocks' scales.
          acc += p.blockwise ? t * double(blockA(i, kk / 128)) * double(blockB(kk / 128, j)) : t;
        }
        if (p.scaled) acc = acc * rowScale[size_t(i)] + colBias[size_t(j)];
        if (p.residual) {
          const double x = acc + colBias[size_t(j)];
          acc = x / (1 + std::exp(-x)) + double(bf16BitsToFloat(resid[size_t(i * p.n + j)]));
        }
        if (p.tensorwise) acc = acc * double(rowScale[0] * colBias[0]);  // the one element of each
        else if (p.fp8 && !p.blockwise) acc = acc * rowScale[size_t(i)] * colBias[size_t(j)];
        double got = decode(c[size_t((bi * p.m + i) * p.n + j)]);  // BF16 for every program but FP16's
        // One rounding of the output (8 significant bits in BF16, 11 in FP16) and f32 sums.
        double tol = std::fabs(acc) / (p.f16 ? 1024 : 128) + 1e-3 * std::sqrt(double(p.k));
        if (!(std::fabs(got - acc) <= tol)) {
          ++bad;
          ADD_FAILURE() << "[" << configText << "] " << p.m << "x" << p.n << "x" << p.k << (p.kMajor ? " K-major" : "")
                        << (p.f16 ? " f16" : "") << (p.fp8 ? " fp8" : "")
                        << ": C[" << bi << "][" << i << "][" << j << "] = " << got << ", expected " << acc;
        }
      }
  for (size_t i = size_t(nb * p.m * p.n); i < c.size(); ++i)
    if (c[i] != kPoison) {
      ADD_FAILURE() << "wrote past the end of C at element " << i;
      break;
    }
  // split_k, stream_k: every flag is back to zero, ready for the next launch.
  for (size_t i = 0; i < flagCount; ++i) {
    int32_t f;
    std::memcpy(&f, mem.at(flags).data() + 4 * i, 4);
    if (f != 0) {
      ADD_FAILURE() << "workspace flag " << i << " is " << f << " after the launch, not 0";
      break;
    }
  }
}

std::string compileError(const ir::Module& program, const std::string& config) {
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(compile(program, Target::sm90a(), Config::parse(config), diag)) << config;
  return diag.str();
}

std::function<void(ir::Operation&)> dropAll(const char* name) {
  return [name](ir::Operation& k) {
    std::vector<ir::Operation*> ops;
    k.walk([&](ir::Operation& op) {
      if (op.is(name)) ops.push_back(&op);
    });
    for (ir::Operation* op : ops) op->erase();
  };
}

}  // namespace kiln::sm90sim
