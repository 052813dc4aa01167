// The strategies' option tables (contract in options.h). A strategy's rules beyond one key's range
// (how keys combine, what a target allows) are its validator's: sm80 in config.cpp, sm90 in
// sm90/config.cpp, rowwise in rowwise/rowwise_config.cpp.
#include "schedule/options.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "kiln/ir/op_registry.h"

namespace kiln::options {
namespace {

template <typename E>
using Names = std::vector<std::pair<const char*, E>>;

const Names<Raster> kRasters = {{"row", Raster::Row}, {"grouped", Raster::Grouped}};
const Names<EpilogueStore> kEpilogues = {
    {"direct", EpilogueStore::Direct}, {"smem", EpilogueStore::Smem}, {"tma", EpilogueStore::Tma}};
const Names<Consumers> kConsumers = {{"cooperative", Consumers::Cooperative}, {"pingpong", Consumers::Pingpong}};
const Names<FragPrefetch> kFragPrefetch = {{"none", FragPrefetch::None}, {"a", FragPrefetch::A}};
const Names<L2Hint> kL2Hints = {{"none", L2Hint::None}, {"reuse", L2Hint::Reuse}};
const Names<StageStore> kStageStores = {{"pairs", StageStore::Pairs}, {"stmatrix", StageStore::Stmatrix}};
const Names<Fp8Accum> kFp8Accums = {
    {"fast", Fp8Accum::Fast}, {"promote", Fp8Accum::Promote}, {"promote_pairs", Fp8Accum::PromotePairs}};
const Names<EpilogueLoads> kEpilogueLoads = {
    {"late", EpilogueLoads::Late}, {"early", EpilogueLoads::Early}, {"prefetch", EpilogueLoads::Prefetch}};
const Names<bool> kBools = {{"false", false}, {"true", true}};

template <typename E>
const char* nameOf(const Names<E>& names, E e) {
  for (const auto& [n, v] : names)
    if (v == e) return n;
  return "?";
}

Option intOption(const char* key, const char* group, int Config::*field, int lo, int hi, int def,
                 const char* meaning) {
  Option o{key, group, Type::Int, meaning, lo, hi, {}, std::to_string(def)};
  o.get = [field](const Config& c) { return std::to_string(c.*field); };
  o.set = [field, key = std::string(key), lo, hi](Config& c, std::string_view v) -> std::string {
    int x = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || p != v.data() + v.size() || x < lo || x > hi) {
      if (lo == 0) return fmt::format("config key '{}' needs an integer from {} to {}, got '{}'", key, lo, hi, v);
      if (lo == 1) return fmt::format("config key '{}' needs a positive integer up to {}, got '{}'", key, hi, v);
      return fmt::format("config key '{}' needs an integer from {} to {}, got '{}'", key, lo, hi, v);
    }
    c.*field = x;
    return {};
  };
  return o;
}

template <typename E>
Option namedOption(const char* key, const char* group, E Config::*field, const Names<E>& names, E def,
                   const char* meaning) {
  Option o{key, group, std::is_same_v<E, bool> ? Type::Bool : Type::Enum, meaning, 0, 0, {}, nameOf(names, def)};
  for (const auto& [n, e] : names) o.values.push_back(n);
  o.get = [field, &names](const Config& c) { return std::string(nameOf(names, c.*field)); };
  o.set = [field, &names, key = std::string(key)](Config& c, std::string_view v) -> std::string {
    for (const auto& [n, e] : names)
      if (v == n) {
        c.*field = e;
        return {};
      }
    std::string list;
    for (const auto& [n, e] : names) list += (list.empty() ? "" : ", ") + std::string(n);
    return fmt::format("config key '{}' must be one of {}, got '{}'", key, list, v);
  };
  return o;
}

Option boolOption(const char* key, const char* group, bool Config::*field, bool def, const char* meaning) {
  return namedOption(key, group, field, kBools, def, meaning);
}

// Keys the GEMM strategies share; each strategy's table lists them with its own default.
Option bmOption(int def) { return intOption("bm", "mainloop", &Config::bm, 1, 1024, def, "block tile rows (M)"); }
Option bnOption(int def) { return intOption("bn", "mainloop", &Config::bn, 1, 1024, def, "block tile columns (N)"); }
Option bkOption(int def) {
  return intOption("bk", "mainloop", &Config::bk, 1, 1024, def, "K elements of one pipeline stage");
}
Option stagesOption(int def) {
  return intOption("stages", "mainloop", &Config::stages, 1, 16, def, "depth of the shared-memory ring of K stages");
}
Option rasterOption() {
  return namedOption("raster", "scheduler", &Config::raster, kRasters, Raster::Row,
                     "order of the output tiles: row by row, or group_m rows of tiles column by column (L2 reuse)");
}
Option groupMOption() {
  return intOption("group_m", "scheduler", &Config::groupM, 1, 64, 8, "rows of tiles per group with raster=grouped");
}

Strategy sm80Strategy() {
  return {"sm80_multistage",
          "warp-level mma.sync fed by ldmatrix from a cp.async ring (sm_80 and later)",
          validateSm80Multistage,
          {bmOption(128), bnOption(128), bkOption(32), stagesOption(3),
           intOption("warps_m", "mainloop", &Config::warpsM, 1, 32, 2, "warps along M (the warp tile is bm / warps_m rows)"),
           intOption("warps_n", "mainloop", &Config::warpsN, 1, 32, 2,
                     "warps along N (the warp tile is bn / warps_n columns)"),
           namedOption("frag_prefetch", "mainloop", &Config::fragPrefetch, kFragPrefetch, FragPrefetch::A,
                       "first-k-step fragments loaded before a K tile's barrier and carried across it: A's, or none"),
           intOption("align_a", "mainloop", &Config::alignA, 1, 16, 16,
                     "bytes A's address and rows are aligned to: cp.async of 16, 8 or 4 bytes, below 4 by element"),
           intOption("align_b", "mainloop", &Config::alignB, 1, 16, 16,
                     "bytes B's address and rows are aligned to: cp.async of 16, 8 or 4 bytes, below 4 by element"),
           rasterOption(), groupMOption(),
           intOption("align_c", "epilogue", &Config::alignC, 1, 16, 16,
                     "bytes the output's address and rows are aligned to: stores of element pairs, or of one element "
                     "when a pair is wider")}};
}

Strategy sm90Strategy() {
  return {
      "sm90_ws_persistent",
      "warp-specialized persistent wgmma fed by TMA: one producer warpgroup, 1 to 3 consumer warpgroups (sm_90a)",
      validateSm90WsPersistent,
      {bmOption(128), bnOption(128), bkOption(64), stagesOption(3),
       intOption("warps_m", "mainloop", &Config::warpsM, 1, 32, 2, "consumer warpgroups along the tile's rows"),
       intOption("warps_n", "mainloop", &Config::warpsN, 1, 32, 1,
                 "consumer warpgroups along the tile's columns (swap_ab only)"),
       namedOption("consumers", "mainloop", &Config::consumers, kConsumers, Consumers::Cooperative,
                   "consumer warpgroups split each tile (cooperative) or own whole tiles in turn (pingpong)"),
       boolOption("swap_ab", "mainloop", &Config::swapAB, false,
                  "compute the tile as C^T = B^T A^T, so tile heights come in eights (small M)"),
       namedOption("l2_hint", "mainloop", &Config::l2Hint, kL2Hints, L2Hint::None,
                   "load an operand no other block reads L2 evict_first (reuse), or give no policy (none)"),
       rasterOption(), groupMOption(),
       intOption("split_k", "scheduler", &Config::splitK, 1, 256, 1, "K slices of a tile, summed through a workspace"),
       intOption("stream_k", "scheduler", &Config::streamK, 0, 2, 0,
                 "the last 1 or 2 waves' tiles shared out as equal runs of K steps, one per block (0: off)"),
       intOption("blocks_per_sm", "scheduler", &Config::blocksPerSm, 0, 2, 0,
                 "blocks of the persistent grid per SM: 2 puts two one-consumer-warpgroup blocks on each SM "
                 "(128 registers a thread, half the shared memory each), one block's prologue and epilogue "
                 "beside the other's K loop (0: one)"),
       intOption("cluster_m", "cluster", &Config::clusterM, 1, 16, 1, "blocks of a cluster along M (sharing B by multicast)"),
       intOption("cluster_n", "cluster", &Config::clusterN, 1, 16, 1, "blocks of a cluster along N (sharing A by multicast)"),
       namedOption("epilogue", "epilogue", &Config::epilogue, kEpilogues, EpilogueStore::Direct,
                   "how the output tile is stored: from registers (direct) or staged for TMA stores (tma)"),
       namedOption("stage_store", "epilogue", &Config::stageStore, kStageStores, StageStore::Pairs,
                   "how epilogue=tma writes the staged tile: st.shared of pairs (packed 16-bit pairs, or for an f32 "
                   "output st.shared.v2.f32 pairs), or stmatrix (16-bit outputs only; refused for an f32 output)"),
       boolOption("reuse_stage", "epilogue", &Config::reuseStage, false,
                  "stage epilogue=tma's boxes beyond its own slots in the ring stage the K loop read last"),
       intOption("store_slots", "epilogue", &Config::storeSlots, 0, 2, 0,
                 "epilogue=tma staging slots per consumer warpgroup (0: two, or one at bn=64)"),
       intOption("store_pieces", "epilogue", &Config::storePieces, 0, 4, 0,
                 "with swap_ab, row pieces each staged box goes out in (0: one)"),
       intOption("align_c", "epilogue", &Config::alignC, 1, 16, 16,
                 "bytes the output's address and rows are aligned to: below 16 (an N off 8 elements), "
                 "epilogue=direct stores pairs or single elements"),
       namedOption("epilogue_loads", "epilogue", &Config::epilogueLoads, kEpilogueLoads, EpilogueLoads::Late,
                   "when the epilogue's vector and scalar loads are issued: after the K loop, before it, or "
                   "prefetched into L1 before it"),
       namedOption("fp8_accum", "numerics", &Config::fp8Accum, kFp8Accums, Fp8Accum::Fast,
                   "FP8 sums in wgmma's accumulators (fast), or each K step's promoted to f32 (promote, "
                   "promote_pairs: two steps in flight)"),
       boolOption("pdl", "scheduler", &Config::pdl, false,
                  "programmatic dependent launch: the kernel starts while the previous one in the stream ends, "
                  "its prologue (barriers, tensor maps) overlapping that kernel's tail, and waits for it "
                  "(griddepcontrol.wait) before its first global access")}};
}

Strategy rowwiseStrategy() {
  return {"rowwise",
          "memory-bound programs over rows: rows of threads, a row kept on chip or streamed (sm_80 and later)",
          validateRowwise,
          {intOption("row_threads", "rows", &Config::rowThreads, 1, 1024, 32,
                     "threads that share one row (a power of two)"),
           intOption("block_threads", "rows", &Config::blockThreads, 32, 1024, 256,
                     "threads per block (a multiple of 32 and of row_threads)"),
           intOption("vectors", "rows", &Config::vectors, 1, 16, 4,
                     "16-byte vectors of a row per thread: rows up to row_threads x vectors stay on chip"),
           boolOption("scalar", "rows", &Config::scalar, false,
                      "one element per access instead of 16-byte vectors (any row length)"),
           intOption("blocks_per_sm", "scheduler", &Config::blocksPerSm, 0, 32, 0,
                     "a persistent grid of this many blocks per SM (0: a block per row group)")}};
}

Strategy gemvStrategy() {
  return {"gemv",
          "memory-bound GEMM for small M (GEMV): B streamed once in 16-byte loads, f32 sums on the CUDA cores, "
          "reduced on chip (sm_80 and later)",
          validateGemv,
          {intOption("bm", "mainloop", &Config::bm, 1, 16, 1, "rows of M per block (sums per thread: bm times its columns)"),
           intOption("bn", "mainloop", &Config::bn, 8, 1024, 64, "columns of N per block"),
           intOption("block_threads", "mainloop", &Config::blockThreads, 32, 1024, 256,
                     "threads per block (a multiple of 32)"),
           intOption("row_threads", "mainloop", &Config::rowThreads, 1, 32, 32,
                     "K-major B: lanes that stride K along one N row (a power of two up to 32)"),
           intOption("vectors", "mainloop", &Config::vectors, 1, 8, 4,
                     "loads of B per thread issued before their FMAs (per N row with a K-major B)"),
           intOption("align_a", "mainloop", &Config::alignA, 1, 16, 16,
                     "bytes A's address and rows are aligned to: vector loads along K of a row-major A, along M of a "
                     "column-major one"),
           intOption("align_b", "mainloop", &Config::alignB, 1, 16, 16,
                     "bytes B's address and rows are aligned to: loads of 16, 8, 4 or 2 bytes along its rows"),
           intOption("align_c", "epilogue", &Config::alignC, 1, 16, 16,
                     "bytes the output's address and rows are aligned to: stores of element pairs, or of one element "
                     "when a pair is wider"),
           intOption("split_k", "scheduler", &Config::splitK, 1, 64, 1,
                     "slices of K per block tile, on separate blocks; the last to finish sums them in slice order "
                     "through a workspace")}};
}

}  // namespace

std::string Option::typeName() const { return type == Type::Int ? "int" : type == Type::Bool ? "bool" : "enum"; }

std::string Option::allowed() const {
  if (type == Type::Int) return fmt::format("{} to {}", lo, hi);
  std::string s;
  for (const auto& v : values) s += (s.empty() ? "" : ", ") + v;
  return s;
}

const Option* Strategy::find(std::string_view key) const {
  for (const Option& o : options)
    if (o.key == key) return &o;
  return nullptr;
}

Config Strategy::defaults() const {
  Config c;
  c.strategy = name;
  for (const Option& o : options) o.set(c, o.defaultValue);
  return c;
}

const std::vector<Strategy>& strategies() {
  static const std::vector<Strategy> s = {sm80Strategy(), sm90Strategy(), rowwiseStrategy(), gemvStrategy()};
  return s;
}

const Strategy* findStrategy(std::string_view name) {
  for (const Strategy& s : strategies())
    if (s.name == name) return &s;
  return nullptr;
}

std::string didYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  return ir::nearestName(word, candidates);
}

}  // namespace kiln::options

namespace kiln {
const char* fp8AccumName(Fp8Accum a) { return options::nameOf(options::kFp8Accums, a); }

std::vector<ConfigOption> configOptions(std::string_view strategy) {
  std::vector<ConfigOption> out;
  if (const options::Strategy* s = options::findStrategy(strategy))
    for (const options::Option& o : s->options)
      out.push_back({o.key, o.group, o.typeName(), o.meaning, o.lo, o.hi, o.values, o.defaultValue});
  return out;
}

std::optional<Config> defaultConfig(std::string_view strategy) {
  const options::Strategy* s = options::findStrategy(strategy);
  if (!s) return std::nullopt;
  return s->defaults();
}
}  // namespace kiln
