#pragma once
// kiln::Config: a schedule as data (DESIGN.md, "Schedules: algorithm apart from how").
//
// One line of `key=value` pairs, e.g.
//   strategy=sm80_multistage bm=128 bn=128 bk=32 stages=3 warps_m=2 warps_n=4
// `strategy` (sm80_multistage when not given) picks the strategy, whose option table
// (options.h) says which keys the line may use, their types and ranges, and their defaults: a key
// not given keeps the strategy's default, so a bare `strategy=S` is a config S compiles. str()
// prints the strategy's every key in its table's order, so the printed form is canonical (two
// equal configs print the same line, and the line parses back to an equal config).
//
// The fields are one struct for all strategies (the GEMM strategies share the tile, pipeline and
// scheduler fields); a field outside its strategy's table keeps the struct's default, which
// validate() checks, so no strategy silently ignores one. Validation happens in two layers:
// parse() checks syntax, the strategy's keys and value ranges; validate() checks the config
// against a target and the operand element sizes of the program (shared-memory budget, warp
// tiling, copy distribution). Messages are exact and tested (tests/unit/schedule/).
//
//   kiln::ir::DiagnosticEngine diag;
//   auto c = kiln::Config::parse("strategy=sm90_ws_persistent bm=128 bn=256", diag);
//   if (c && kiln::validate(*c, kiln::Target::sm90a(), {}, diag)) kernel = kiln::Kernel::build(..., c->str(), diag);
//   for (const kiln::ConfigOption& o : kiln::configOptions("rowwise")) std::puts(o.key.c_str());
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/diagnostics.h"
#include "kiln/target.h"

namespace kiln {

enum class Raster : uint8_t {
  Row,      // blockIdx.x walks N tiles, blockIdx.y walks M tiles
  Grouped,  // group_m rows of tiles are walked column by column (L2 reuse of B); 1-D grid
};

enum class EpilogueStore : uint8_t {
  Direct,  // each thread stores its accumulator fragment, masked, straight to global memory
  Smem,    // stage the tile through shared memory for full-width stores (not implemented yet)
  Tma,     // TMA store (sm_90+; not implemented yet)
};

enum class Consumers : uint8_t {
  Cooperative,  // the consumer warpgroups split each tile's rows and work on it together
  Pingpong,     // each consumer warpgroup owns whole tiles, alternating, so one's epilogue runs
                // while the other's MMAs do (warp-specialized strategies)
};

// sm80_multistage: which fragments of a K tile's first k step are loaded before the barrier that
// ends the previous tile and carried across the loop edge in registers (sm80_mainloop.cpp).
enum class FragPrefetch : uint8_t {
  None,  // neither: the first k step is loaded at the top of the iteration (the barrier still sits
         // before the last k step, so those loads do not wait for it)
  A,     // A's; B's are loaded at the top of the iteration (the default)
};

// Which operand loads carry an L2 cache policy (warp-specialized strategies' TMA loads).
enum class L2Hint : uint8_t {
  None,   // no policy: every load is evict_normal
  Reuse,  // an operand that no other block reads (A when N fits one tile column, B when M fits one
          // tile or cluster row; decided by the kernel from the launch's M and N) is loaded
          // evict_first, so streaming it does not displace what L2 holds
};


// sm90_ws_persistent with FP8 operands: where wgmma's products are summed.
enum class Fp8Accum : uint8_t {
  Fast,     // in the accumulators wgmma carries over every K step: the tensor cores' own FP8
            // accumulation, which keeps fewer bits than f32 (cuBLASLt's FAST_ACCUM)
  Promote,  // each K step's wgmmas start from zero and their sum is added to f32 accumulators in
            // registers, so the tensor cores sum 128 products at most (cuBLASLt's default; twice
            // the accumulator registers)
  PromotePairs,  // the same, with two K steps in flight: the second's wgmmas run while the first's
                 // sums are added (three times the accumulator registers)
};


// How the staged TMA-store epilogue (sm90, epilogue=tma) writes the tile into shared memory.
enum class StageStore : uint8_t {
  Pairs,     // st.shared of each thread's packed pairs, four per 16 x 16 block (the default)
  Stmatrix,  // stmatrix .x4: one per 16 x 16 block and warp (measured 1-2% slower on long K)
};

// When the epilogue loads the vectors and scalars it reads (a per-row or per-column scale, a bias
// row: tile.load of a [M] or [N] slice, tile.load_scalar), sm90_ws_persistent. Loads of whole
// [M, N] tiles always stay in the epilogue.
enum class EpilogueLoads : uint8_t {
  Late,   // in the epilogue, after the K loop: their latency (hundreds of cycles from L2 while the
          // operands stream) is exposed once per tile, in FP8 ~3% of a 4096-deep tile
  Early,  // at the tile's start, before its K loop, into registers held through it: the latency
          // hides behind the K loop, for a register per value and thread (36 for a 64 x 128
          // warpgroup tile with a row and a column scale: per 64-column box, 16 + 2)
  Prefetch,  // at the tile's start its threads prefetch the lines the epilogue's loads will read
             // into L1 (one prefetch per 128-byte line of the block tile's span, spread over the
             // warpgroup's threads), and the epilogue issues all its loads where it starts: L2's
             // latency hides behind the K loop, the L1 round trips overlap one another, and no
             // register is held through the K loop
};

// The initializers are the struct's defaults (sm80_multistage's); each strategy's own are in its table.
struct Config {
  std::string strategy = "sm80_multistage";
  int bm = 128;       // block tile rows (M)
  int bn = 128;       // block tile columns (N)
  int bk = 32;        // K step of one pipeline stage
  int stages = 3;     // shared-memory ring depth
  int warpsM = 2;     // warps along M (sm90: consumer warpgroups); the warp tile is (bm / warpsM) x (bn / warpsN)
  int warpsN = 2;     // warps along N (sm90_ws_persistent: consumer warpgroups along N, swap_ab only)
  Raster raster = Raster::Row;
  int groupM = 8;     // rows of tiles per group when raster=grouped
  int splitK = 1;     // K slices computed by separate blocks
  bool swapAB = false;  // compute C^T = B^T A^T (small M)
  int clusterM = 1;   // thread-block cluster shape (sm_90+)
  int clusterN = 1;
  EpilogueStore epilogue = EpilogueStore::Direct;
  Consumers consumers = Consumers::Cooperative;
  FragPrefetch fragPrefetch = FragPrefetch::A;
  L2Hint l2Hint = L2Hint::None;
  StageStore stageStore = StageStore::Pairs;
  // Stream-K (sm90_ws_persistent): 0 off; W = 1 or 2: the tiles of the last W waves (the partial
  // one, and with 2 the whole one before it) are shared out as equal runs of K steps, one per
  // block, so no SM idles in a partial last wave (docs/sm90-strategy.md).
  int streamK = 0;
  // sm90_ws_persistent, epilogue=tma: the boxes of a tile beyond the warpgroup's own staging slots
  // are staged in the B part of the ring stage the K loop read last, which goes back to the
  // producer once their TMA stores have read it (during the next tile's first K step), so the
  // epilogue never waits for a store to read a slot (docs/sm90-strategy.md, "reuse_stage").
  bool reuseStage = false;
  // sm90_ws_persistent, epilogue=tma: staging slots per consumer warpgroup, each one 64-column box
  // of its rows (0: two, or one at bn = 64). One slot costs the epilogue a wait for each box's
  // store to read it before the next is staged, and frees rows x 128 bytes per warpgroup for the
  // ring (192x192: a fourth stage).
  int storeSlots = 0;
  // sm90_ws_persistent, epilogue=tma, swap_ab: each staged box goes out in this many row pieces
  // (0: one), a TMA box of rows / pieces each, so a slot holds a piece: with warps_n the staging of
  // a full-height box per warpgroup shrinks that much (224-256-row tiles keep a fourth stage).
  int storePieces = 0;
  Fp8Accum fp8Accum = Fp8Accum::Fast;
  EpilogueLoads epilogueLoads = EpilogueLoads::Late;
  // sm80_multistage: the byte alignment the kernel may assume for the base address and every row
  // start of A, B and the output C (1, 2, 4, 8 or 16; docs/layouts.md). It accesses a tensor in
  // pieces of at most that many bytes: A and B by cp.async of 16, 8 or 4 bytes, or below 4 bytes
  // element by element through registers; C by stores of element pairs when align_c covers a pair,
  // else one element at a time. The launch contract asks exactly that alignment of the pointers and
  // of the row lengths (a dense tensor's K or N, a strided one's leading dimension).
  int alignA = 16;
  int alignB = 16;
  int alignC = 16;

  // ---- rowwise: memory-bound programs, rows of threads (schedule/rowwise/; docs/rowwise-strategy.md).
  int rowThreads = 32;     // row_threads: threads that share one row (1, 2, 4, ..., 1024)
  int blockThreads = 256;  // block_threads: threads per block (a multiple of 32 and of row_threads)
  // vectors: 16-byte vectors of a row each thread holds: a row of up to row_threads * vectors *
  // (16 / element bytes) elements is read once and kept on chip; a longer row streams through,
  // this many vectors per thread and step, once per pass.
  int vectors = 4;
  bool scalar = false;     // scalar: one element per access instead of 16-byte vectors (any row length)
  int blocksPerSm = 0;     // blocks_per_sm: a persistent grid of this many blocks per SM (0: a block per row group)
  // pdl (sm90): programmatic dependent launch (docs/sm90-strategy.md, "Programmatic dependent
  // launch"): launched so its prologue overlaps the previous kernel's tail, waiting
  // (griddepcontrol.wait) before its first global access.
  bool pdl = false;

  // Parses one line; reports every problem found and returns nullopt on error. Each error points
  // at its entry: with `locIsText`, `loc` is where the text's first character is (a --config
  // value, a registered variant's line) and the error's column is the entry's; otherwise (an op's
  // config attribute, whose own position the IR does not keep) the error is at `loc` and names
  // the entry's column in the config.
  static std::optional<Config> parse(std::string_view text, ir::DiagnosticEngine& diag,
                                     const ir::Location& loc = {}, bool locIsText = false);
  // Convenience for the DSL: throws ir::Error with the diagnostics.
  static Config parse(std::string_view text);

  std::string str() const;
  bool operator==(const Config&) const = default;

  int warps() const { return warpsM * warpsN; }
  int threads() const { return 32 * warps(); }
  int warpTileM() const { return bm / warpsM; }
  int warpTileN() const { return bn / warpsN; }
  // Bytes of one pipeline stage (an A tile bm x bk and a B tile bk x bn).
  int64_t stageBytes(int aElemBytes, int bElemBytes) const {
    return int64_t(bm) * bk * aElemBytes + int64_t(bk) * bn * bElemBytes;
  }
  int64_t pipelineSmemBytes(int aElemBytes, int bElemBytes) const { return stages * stageBytes(aElemBytes, bElemBytes); }
};

// What validate() needs to know about the program.
struct OperandInfo {
  int aElemBytes = 2;
  int bElemBytes = 2;
  int cElemBytes = 2;  // the output's: sm90's TMA-store epilogue stages 2-byte or 4-byte elements
};

// Checks a config against the target and the program's operands. Reports every problem found.
bool validate(const Config& c, const Target& t, const OperandInfo& ops, ir::DiagnosticEngine& diag,
              const ir::Location& loc = {});

// The config text of an fp8_accum value ("fast", "promote", "promote_pairs").
const char* fp8AccumName(Fp8Accum a);
// The strategies Kiln implements ("sm80_multistage", "sm90_ws_persistent", "rowwise", "gemv").
const std::vector<std::string>& knownStrategies();

// One key of a strategy's option table, as data (the reference `kiln config --list` prints and
// docs/config.md lists): what a tool or a tuner needs to enumerate and check a strategy's space.
struct ConfigOption {
  std::string key;      // "bm"
  std::string group;    // "mainloop", "scheduler", "cluster", "epilogue", ...
  std::string type;     // "int", "enum" or "bool"
  std::string meaning;  // one line
  int lo = 0, hi = 0;   // int: the accepted range
  std::vector<std::string> values;  // enum and bool: the accepted names, in order
  std::string defaultValue;         // as a config line writes it
};

// A strategy's keys in its table's order; empty for a strategy Kiln does not implement.
std::vector<ConfigOption> configOptions(std::string_view strategy);
// The config a bare `strategy=NAME` parses to (every key at the strategy's default); nullopt for
// a strategy Kiln does not implement.
std::optional<Config> defaultConfig(std::string_view strategy);

}  // namespace kiln
