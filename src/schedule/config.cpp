// Config parsing, printing and validation (contract in config.h).
#include "schedule/config.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <vector>

#include <fmt/format.h>

namespace kiln {
namespace {

using ir::DiagnosticEngine;
using ir::Location;

// One table of keys: name, how to print the field, how to parse into it.
struct Key {
  const char* name;
  std::function<std::string(const Config&)> print;
  // Returns an error message, or "" on success.
  std::function<std::string(Config&, std::string_view)> parse;
};

std::string parseInt(std::string_view key, std::string_view v, int lo, int hi, int& out) {
  int x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size() || x < lo || x > hi) {
    if (lo == 0) return fmt::format("config key '{}' needs an integer from {} to {}, got '{}'", key, lo, hi, v);
    return fmt::format("config key '{}' needs a positive integer up to {}, got '{}'", key, hi, v);
  }
  out = x;
  return {};
}

template <typename E>
std::string parseEnum(std::string_view key, std::string_view v, const std::vector<std::pair<const char*, E>>& names,
                      E& out) {
  std::string list;
  for (const auto& [n, e] : names) {
    if (v == n) {
      out = e;
      return {};
    }
    list += (list.empty() ? "" : ", ") + std::string(n);
  }
  return fmt::format("config key '{}' must be one of {}, got '{}'", key, list, v);
}

const std::vector<std::pair<const char*, Raster>> kRasters = {{"row", Raster::Row}, {"grouped", Raster::Grouped}};
const std::vector<std::pair<const char*, EpilogueStore>> kEpilogues = {
    {"direct", EpilogueStore::Direct}, {"smem", EpilogueStore::Smem}, {"tma", EpilogueStore::Tma}};
const std::vector<std::pair<const char*, Consumers>> kConsumers = {{"cooperative", Consumers::Cooperative},
                                                                   {"pingpong", Consumers::Pingpong}};
const std::vector<std::pair<const char*, FragPrefetch>> kFragPrefetch = {{"none", FragPrefetch::None},
                                                                         {"a", FragPrefetch::A},
                                                                         {"ab", FragPrefetch::AB}};
const std::vector<std::pair<const char*, L2Hint>> kL2Hints = {{"none", L2Hint::None}, {"reuse", L2Hint::Reuse}};
const std::vector<std::pair<const char*, StreamFill>> kStreamFills = {
    {"256", StreamFill::Segment256}, {"128", StreamFill::Line128}, {"sector", StreamFill::Sector}};
const std::vector<std::pair<const char*, StageStore>> kStageStores = {{"pairs", StageStore::Pairs},
                                                                      {"stmatrix", StageStore::Stmatrix}};
const std::vector<std::pair<const char*, SplitHandover>> kSplitHandovers = {{"workspace", SplitHandover::Workspace},
                                                                             {"cluster", SplitHandover::Cluster}};
const std::vector<std::pair<const char*, StoreHint>> kStoreHints = {{"none", StoreHint::None},
                                                                    {"evict_first", StoreHint::EvictFirst}};
const std::vector<std::pair<const char*, Fp8Accum>> kFp8Accums = {{"fast", Fp8Accum::Fast},
                                                                  {"promote", Fp8Accum::Promote},
                                                                  {"promote_pairs", Fp8Accum::PromotePairs}};
const std::vector<std::pair<const char*, EpilogueLoads>> kEpilogueLoads = {{"late", EpilogueLoads::Late},
                                                                          {"early", EpilogueLoads::Early},
                                                                          {"prefetch", EpilogueLoads::Prefetch}};
const std::vector<std::pair<const char*, bool>> kBools = {{"false", false}, {"true", true}};

template <typename E>
const char* enumName(const std::vector<std::pair<const char*, E>>& names, E e) {
  for (const auto& [n, v] : names)
    if (v == e) return n;
  return "?";
}

#define INT_KEY(key, field, lo, hi)                                                                \
  Key {                                                                                            \
    key, [](const Config& c) { return std::to_string(c.field); },                                 \
        [](Config& c, std::string_view v) { return parseInt(key, v, lo, hi, c.field); }           \
  }

const std::vector<Key>& keys() {
  static const std::vector<Key> k = {
      Key{"strategy", [](const Config& c) { return c.strategy; },
          [](Config& c, std::string_view v) -> std::string {
            if (v.empty()) return "config key 'strategy' needs a name";
            c.strategy = std::string(v);
            return {};
          }},
      INT_KEY("bm", bm, 1, 1024),
      INT_KEY("bn", bn, 1, 1024),
      INT_KEY("bk", bk, 1, 1024),
      INT_KEY("stages", stages, 1, 16),
      INT_KEY("warps_m", warpsM, 1, 32),
      INT_KEY("warps_n", warpsN, 1, 32),
      Key{"raster", [](const Config& c) { return std::string(enumName(kRasters, c.raster)); },
          [](Config& c, std::string_view v) { return parseEnum("raster", v, kRasters, c.raster); }},
      INT_KEY("group_m", groupM, 1, 64),
      INT_KEY("split_k", splitK, 1, 256),
      Key{"swap_ab", [](const Config& c) { return std::string(c.swapAB ? "true" : "false"); },
          [](Config& c, std::string_view v) { return parseEnum("swap_ab", v, kBools, c.swapAB); }},
      INT_KEY("cluster_m", clusterM, 1, 16),
      INT_KEY("cluster_n", clusterN, 1, 16),
      Key{"epilogue", [](const Config& c) { return std::string(enumName(kEpilogues, c.epilogue)); },
          [](Config& c, std::string_view v) { return parseEnum("epilogue", v, kEpilogues, c.epilogue); }},
      INT_KEY("regs_producer", regsProducer, 0, 255),
      INT_KEY("regs_consumer", regsConsumer, 0, 255),
      Key{"consumers", [](const Config& c) { return std::string(enumName(kConsumers, c.consumers)); },
          [](Config& c, std::string_view v) { return parseEnum("consumers", v, kConsumers, c.consumers); }},
      Key{"frag_prefetch", [](const Config& c) { return std::string(enumName(kFragPrefetch, c.fragPrefetch)); },
          [](Config& c, std::string_view v) { return parseEnum("frag_prefetch", v, kFragPrefetch, c.fragPrefetch); }},
      Key{"l2_hint", [](const Config& c) { return std::string(enumName(kL2Hints, c.l2Hint)); },
          [](Config& c, std::string_view v) { return parseEnum("l2_hint", v, kL2Hints, c.l2Hint); }},
      Key{"stream_fill", [](const Config& c) { return std::string(enumName(kStreamFills, c.streamFill)); },
          [](Config& c, std::string_view v) { return parseEnum("stream_fill", v, kStreamFills, c.streamFill); }},
      Key{"stage_store", [](const Config& c) { return std::string(enumName(kStageStores, c.stageStore)); },
          [](Config& c, std::string_view v) { return parseEnum("stage_store", v, kStageStores, c.stageStore); }},
      INT_KEY("stream_k", streamK, 0, 2),
      Key{"store_hint", [](const Config& c) { return std::string(enumName(kStoreHints, c.storeHint)); },
          [](Config& c, std::string_view v) { return parseEnum("store_hint", v, kStoreHints, c.storeHint); }},
      Key{"reuse_stage", [](const Config& c) { return std::string(c.reuseStage ? "true" : "false"); },
          [](Config& c, std::string_view v) { return parseEnum("reuse_stage", v, kBools, c.reuseStage); }},
      Key{"split_handover", [](const Config& c) { return std::string(enumName(kSplitHandovers, c.splitHandover)); },
          [](Config& c, std::string_view v) { return parseEnum("split_handover", v, kSplitHandovers, c.splitHandover); }},
      INT_KEY("store_slots", storeSlots, 0, 2),
      INT_KEY("store_pieces", storePieces, 0, 4),
      Key{"fp8_accum", [](const Config& c) { return std::string(enumName(kFp8Accums, c.fp8Accum)); },
          [](Config& c, std::string_view v) { return parseEnum("fp8_accum", v, kFp8Accums, c.fp8Accum); }},
      Key{"epilogue_loads", [](const Config& c) { return std::string(enumName(kEpilogueLoads, c.epilogueLoads)); },
          [](Config& c, std::string_view v) { return parseEnum("epilogue_loads", v, kEpilogueLoads, c.epilogueLoads); }},
      INT_KEY("stagger", stagger, 0, 8),
      // The rowwise strategy's keys (isRowwiseKey).
      INT_KEY("row_threads", rowThreads, 1, 1024),
      INT_KEY("block_threads", blockThreads, 32, 1024),
      INT_KEY("vectors", vectors, 1, 16),
      Key{"scalar", [](const Config& c) { return std::string(c.scalar ? "true" : "false"); },
          [](Config& c, std::string_view v) { return parseEnum("scalar", v, kBools, c.scalar); }},
      INT_KEY("blocks_per_sm", blocksPerSm, 0, 32),
  };
  return k;
}
#undef INT_KEY

// The keys of the rowwise strategy; every other key (strategy aside) is the GEMM strategies'.
bool isRowwiseKey(std::string_view name) {
  for (const char* k : {"row_threads", "block_threads", "vectors", "scalar", "blocks_per_sm"})
    if (name == k) return true;
  return false;
}

std::string keyList() {
  std::string s;
  for (const Key& k : keys()) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

}  // namespace

const std::vector<std::string>& knownStrategies() {
  static const std::vector<std::string> s = {"sm80_multistage", "sm90_ws_persistent", "rowwise"};
  return s;
}

std::optional<Config> Config::parse(std::string_view text, DiagnosticEngine& diag, const Location& loc) {
  Config c;
  std::vector<std::string> seen;
  size_t errors = diag.errorCount();
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size()) break;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
    std::string_view entry = text.substr(i, j - i);
    i = j;
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      diag.error(loc) << "config entry '" << entry << "' must have the form key=value";
      continue;
    }
    std::string_view key = entry.substr(0, eq), value = entry.substr(eq + 1);
    const Key* k = nullptr;
    for (const Key& cand : keys())
      if (key == cand.name) k = &cand;
    if (!k) {
      diag.error(loc) << "unknown config key '" << key << "'; known keys: " << keyList();
      continue;
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      diag.error(loc) << "config key '" << key << "' is given twice";
      continue;
    }
    seen.emplace_back(key);
    std::string err = k->parse(c, value);
    if (!err.empty()) diag.error(loc) << err;
  }
  if (diag.errorCount() != errors) return std::nullopt;
  return c;
}

Config Config::parse(std::string_view text) {
  DiagnosticEngine diag;
  auto c = parse(text, diag);
  if (!c) throw ir::Error(diag.diagnostics());
  return *c;
}

const char* fp8AccumName(Fp8Accum a) { return enumName(kFp8Accums, a); }

std::string Config::str() const {
  // The keys of the config's strategy, and any other key that differs from its default.
  bool rows = strategy == "rowwise";
  static const Config defaults;
  std::string s;
  for (const Key& k : keys()) {
    std::string v = k.print(*this);
    if (k.name != std::string_view("strategy") && isRowwiseKey(k.name) != rows && v == k.print(defaults)) continue;
    s += (s.empty() ? "" : " ") + std::string(k.name) + "=" + v;
  }
  return s;
}

bool validate(const Config& c, const Target& t, const OperandInfo& ops, DiagnosticEngine& diag, const Location& loc) {
  size_t errors = diag.errorCount();
  const auto& strategies = knownStrategies();
  if (std::find(strategies.begin(), strategies.end(), c.strategy) == strategies.end()) {
    std::string list;
    for (const auto& s : strategies) list += (list.empty() ? "" : ", ") + s;
    diag.error(loc) << "unknown strategy '" << c.strategy << "'; known strategies: " << list;
    return false;
  }
  // Each strategy refuses the keys of the others (rather than ignoring them).
  static const Config defaults;
  bool rows = c.strategy == "rowwise";
  for (const Key& k : keys())
    if (k.name != std::string_view("strategy") && isRowwiseKey(k.name) != rows && k.print(c) != k.print(defaults))
      diag.error(loc) << "config key '" << k.name << "' "
                      << (rows ? "sets the GEMM strategies' tiles and pipelines, which rowwise does not have"
                               : "sets the rowwise strategy's rows of threads, which " + c.strategy + " does not have")
                      << "; drop it";
  if (rows) return validateRowwise(c, t, ops, diag, loc) && diag.errorCount() == errors;
  if (c.strategy == "sm90_ws_persistent") return validateSm90WsPersistent(c, t, ops, diag, loc) && diag.errorCount() == errors;
  // ---- sm80_multistage: warp-level mma.sync m16n8k16 fed by ldmatrix.x4 from a cp.async ring.
  if (!t.mmaSync || !t.cpAsync || !t.ldmatrix)
    diag.error(loc) << "strategy " << c.strategy << " needs mma.sync, ldmatrix and cp.async, which " << t.name
                    << " does not have";
  // Shared-memory rows of 64, 128 or 256 bytes: bk = 32, 64, 128 for 16-bit operands, 64, 128, 256
  // for FP8 (whose MMA takes the same 32 bytes of K per step).
  int kBytes = std::max(1, std::min(ops.aElemBytes, ops.bElemBytes));
  if ((int64_t(c.bk) * kBytes != 64 && int64_t(c.bk) * kBytes != 128 && int64_t(c.bk) * kBytes != 256))
    diag.error(loc) << "bk=" << c.bk << " is not supported by " << c.strategy << ": use " << 64 / kBytes << ", "
                    << 128 / kBytes << " or " << 256 / kBytes
                    << (kBytes == 1 ? " for FP8 operands" : "")
                    << " (a power-of-two shared-memory row of at least 64 bytes, which the swizzle needs)";
  if (c.bm % c.warpsM != 0 || c.warpTileM() % 16 != 0)
    diag.error(loc) << "bm=" << c.bm << " does not split into warps_m=" << c.warpsM
                    << " warp tiles whose height is a multiple of 16 (the m16n8k16 MMA tile)";
  if (c.bn % c.warpsN != 0 || c.warpTileN() % 16 != 0)
    diag.error(loc) << "bn=" << c.bn << " does not split into warps_n=" << c.warpsN
                    << " warp tiles whose width is a multiple of 16 (two n8 MMA tiles, loaded by one ldmatrix.x4)";
  auto pow2 = [](int v) { return v > 0 && (v & (v - 1)) == 0; };
  if (c.bn % c.warpsN == 0 && c.warpTileN() % 16 == 0 && !pow2(c.warpTileN()))
    diag.error(loc) << "the warp tile width bn/warps_n=" << c.warpTileN()
                    << " must be a power of two (the swizzled B fragment addressing needs it)";
  if (c.threads() > t.maxThreadsPerBlock)
    diag.error(loc) << "warps_m*warps_n=" << c.warps() << " warps is " << c.threads() << " threads, over the "
                    << t.maxThreadsPerBlock << "-thread block limit of " << t.name;
  if (c.stages < 2)
    diag.error(loc) << "stages=" << c.stages << " is too few: " << c.strategy
                    << " needs at least 2 (one buffer filling while another is read)";
  // Each thread copies whole 16-byte chunks; every tile must give each thread the same number.
  auto checkCopies = [&](const char* what, int rows, int cols, int elemBytes) {
    int64_t chunks = int64_t(rows) * cols * elemBytes / 16;
    if (int64_t(rows) * cols * elemBytes % 16 != 0 || chunks % c.threads() != 0)
      diag.error(loc) << "the " << what << " tile (" << rows << "x" << cols << ", " << chunks
                      << " 16-byte chunks) does not divide evenly among " << c.threads() << " threads";
  };
  if (diag.errorCount() == errors) {
    checkCopies("A", c.bm, c.bk, ops.aElemBytes);
    checkCopies("B", c.bk, c.bn, ops.bElemBytes);
  }
  int64_t need = c.pipelineSmemBytes(ops.aElemBytes, ops.bElemBytes);
  if (need > t.maxSmemPerBlock)
    diag.error(loc) << "the pipeline needs " << need << " bytes of shared memory (" << c.stages << " stages x "
                    << c.stageBytes(ops.aElemBytes, ops.bElemBytes) << " bytes), but " << t.name
                    << " allows at most " << t.maxSmemPerBlock << " bytes per block; lower stages, bm, bn or bk";
  // Fields this strategy does not implement: refuse rather than ignore.
  if (c.splitK != 1) diag.error(loc) << "split_k=" << c.splitK << " is not supported by " << c.strategy << " yet";
  if (c.swapAB) diag.error(loc) << "swap_ab=true is not supported by " << c.strategy << " yet";
  if (c.streamK) diag.error(loc) << "stream_k=" << c.streamK << " is not supported by " << c.strategy << "; use sm90_ws_persistent";
  if (c.clusterM != 1 || c.clusterN != 1) {
    if (!t.clusters)
      diag.error(loc) << "cluster_m=" << c.clusterM << " cluster_n=" << c.clusterN
                      << " needs thread-block clusters, which " << t.name << " does not have";
    else
      diag.error(loc) << "thread-block clusters are not used by " << c.strategy << "; set cluster_m=1 cluster_n=1";
  }
  if (c.epilogue == EpilogueStore::Tma && !t.tma)
    diag.error(loc) << "epilogue=tma needs TMA, which " << t.name << " does not have";
  else if (c.epilogue != EpilogueStore::Direct)
    diag.error(loc) << "epilogue=" << (c.epilogue == EpilogueStore::Tma ? "tma" : "smem") << " is not supported by "
                    << c.strategy << " yet; use epilogue=direct";
  if (c.regsProducer != 0 || c.regsConsumer != 0)
    diag.error(loc) << "regs_producer/regs_consumer split registers between warp roles; " << c.strategy
                    << " has no roles (leave them 0)";
  if (c.consumers != Consumers::Cooperative)
    diag.error(loc) << "consumers=pingpong alternates tiles between consumer warpgroups; " << c.strategy
                    << " has no warpgroup roles (use consumers=cooperative)";
  if (c.l2Hint != L2Hint::None)
    diag.error(loc) << "l2_hint=reuse is not supported by " << c.strategy
                    << " yet (its cp.async loads carry no cache policy); use l2_hint=none";
  if (c.streamFill != Config{}.streamFill)
    diag.error(loc) << "stream_fill=" << enumName(kStreamFills, c.streamFill)
                    << " sets how l2_hint=reuse streams an operand, which " << c.strategy
                    << " does not support; drop stream_fill";
  if (c.stageStore != StageStore::Pairs)
    diag.error(loc) << "stage_store=stmatrix writes the staged TMA-store epilogue, which " << c.strategy
                    << " does not have; use stage_store=pairs";
  if (c.storeHint != StoreHint::None)
    diag.error(loc) << "store_hint=evict_first applies to TMA stores of the output, which " << c.strategy
                    << " does not have; use store_hint=none";
  if (c.reuseStage)
    diag.error(loc) << "reuse_stage=true stages the TMA-store epilogue in the wgmma ring, which " << c.strategy
                    << " does not have; use reuse_stage=false";
  if (c.splitHandover != SplitHandover::Workspace)
    diag.error(loc) << "split_handover=cluster reduces split-K slices through a thread-block cluster, which "
                    << c.strategy << " does not split into; leave split_handover=workspace";
  if (c.storeSlots != 0)
    diag.error(loc) << "store_slots sets the staging of the TMA-store epilogue, which " << c.strategy
                    << " does not have; leave store_slots=0";
  if (c.storePieces != 0)
    diag.error(loc) << "store_pieces sets the staging of the TMA-store epilogue, which " << c.strategy
                    << " does not have; leave store_pieces=0";
  if (c.fp8Accum != Fp8Accum::Fast)
    diag.error(loc) << "fp8_accum=" << enumName(kFp8Accums, c.fp8Accum) << " sets where FP8 wgmma sums, which "
                    << c.strategy
                    << " does not issue; leave fp8_accum=fast";
  if (c.epilogueLoads != EpilogueLoads::Late)
    diag.error(loc) << "epilogue_loads=" << enumName(kEpilogueLoads, c.epilogueLoads)
                    << " starts the epilogue's vector loads ahead of the K loop, which " << c.strategy
                    << " does not do yet; use epilogue_loads=late";
  if (c.stagger != 0)
    diag.error(loc) << "stagger=" << c.stagger << " offsets cooperating consumer warpgroups, which " << c.strategy
                    << " does not have; leave stagger=0";
  return diag.errorCount() == errors;
}

}  // namespace kiln
