#pragma once
// Target: what one GPU architecture offers a schedule (DESIGN.md, "Schedules").
//
// A Target is data, not behaviour: which MMA instruction families exist, whether TMA, thread-block
// clusters and setmaxnreg exist, how much shared memory one block may use, the register file, and
// the PTX `.version` / `.target` pair the emitter writes. Strategies ask a Target what it has and
// refuse (with a diagnostic) what it lacks; nothing else in the compiler tests architecture
// numbers.
//
// Sources for the numbers:
//  * Shared memory per block is the opt-in maximum (cudaFuncAttributeMaxDynamicSharedMemorySize):
//    the SM's capacity less the 1 KB CUDA reserves per block. CUDA C++ Programming Guide,
//    "Compute Capabilities", technical specifications table; Ampere / Hopper tuning guides.
//      sm_80 (A100)            164 KB per SM, 163 KB (166912 B) per block
//      sm_89 (Ada)             100 KB per SM,  99 KB (101376 B) per block
//      sm_90 / sm_90a (H100)   228 KB per SM, 227 KB (232448 B) per block
//      sm_100a (B200)          228 KB per SM, 227 KB (232448 B) per block
//      sm_120 (RTX 50xx)       128 KB per SM,  99 KB (101376 B) per block
//  * Every one of these has a 64K x 32-bit register file per SM, at most 255 registers per thread
//    and 1024 threads per block.
//  * PTX ISA version: the first ISA that knows the target (PTX ISA, "Release notes"): sm_80 7.0,
//    sm_89 7.8, sm_90 7.8, sm_90a 8.0, sm_100a 8.6, sm_120 8.7.
//  * mma.sync (PTX ISA, "Warp-level matrix multiply-accumulate instructions") exists on all of
//    them; FP8 (e4m3/e5m2) mma.sync needs sm_89. wgmma and setmaxnreg are sm_90a only; tcgen05 is
//    sm_100a; TMA (cp.async.bulk.tensor) and clusters exist from sm_90 on.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

enum class MmaKind : uint8_t {
  MmaSync,  // mma.sync.aligned (warp-level, registers)
  Wgmma,    // wgmma.mma_async (warpgroup-level, shared-memory descriptors)
  Tcgen05,  // tcgen05.mma (tensor memory)
};

struct Target {
  std::string name;        // "sm_80": what users write and what diagnostics say
  int sm = 0;              // 80, 89, 90, 100, 120
  bool archSpecific = false;  // the 'a' suffix: arch-accelerated features, no forward compatibility
  std::string ptxTarget;   // operand of the PTX `.target` directive
  int ptxIsaMajor = 0;     // minimum PTX ISA version for `.version`
  int ptxIsaMinor = 0;

  bool mmaSync = true;
  bool mmaSyncFp8 = false;
  bool cvtFp8 = false;  // cvt between f32 / f16 and e4m3x2 / e5m2x2 (PTX ISA "cvt", sm_89 and later)
  bool wgmma = false;
  bool tcgen05 = false;
  bool cpAsync = true;
  bool ldmatrix = true;
  bool tma = false;
  bool clusters = false;
  bool setmaxnreg = false;

  int64_t maxSmemPerBlock = 0;  // bytes, opt-in dynamic shared memory limit
  int64_t smemPerSm = 0;        // bytes
  int registersPerSm = 65536;   // 32-bit registers
  int maxRegistersPerThread = 255;
  int maxThreadsPerBlock = 1024;
  // SMs of the reference part (A100: 108, L40S: 142, H100 SXM: 132, B200: 148, RTX 5090: 170). Only
  // selection heuristics use it (wave quantization); a real device may have more or fewer.
  int referenceSms = 108;
  // Clusters of four blocks the reference part runs at once (0: referenceSms / 4). A cluster's
  // blocks share a GPC, so a GPC whose SM count is not a multiple of four leaves SMs out: on the
  // H200, 30 (a persistent 2 x 2-cluster GEMM's grid is 120 blocks by cuOccupancyMaxActiveClusters,
  // bench/results/2026-11-30-h200-narrow-tiles/README.md; cuBLAS runs its clusters of 8 on 120).
  int referenceClustersOf4 = 0;
  // L2 cache of the reference part (A100: 40 MB, L40S: 96, H100 / H200: 50, B200: 126, RTX 5090:
  // 96). Only selection heuristics use it: whether data read again soon is still there.
  int64_t referenceL2Bytes = 40ll << 20;

  bool has(MmaKind k) const;
  std::string ptxVersion() const;  // "7.0"

  static Target sm80();
  static Target sm89();
  static Target sm90();
  static Target sm90a();
  static Target sm100a();
  static Target sm120();
  // Every target Kiln knows, oldest first.
  static const std::vector<Target>& all();
  // Looks a target up by name ("sm_80", also "sm80"); nullopt when unknown.
  static std::optional<Target> byName(std::string_view name);
  // "sm_80, sm_89, ..." for diagnostics.
  static std::string knownNames();

  bool operator==(const Target& o) const { return name == o.name; }
};

}  // namespace kiln
