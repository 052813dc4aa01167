#pragma once
// The bucketing rule's choice at a shape of a tuning entry's bucket (docs/tuning.md, "The
// bucketing rule, and what it costs").
//
// An entry was measured at one shape (its dims); a lookup may come at another shape of the same
// bucket, up to 19% away along each dim. Reusing the winner as it is cost 0.840 of a search of the
// neighbour's own in geometric mean (worst 0.751; H100, bench/results/2026-12-06-h100-tune): a tile
// fitted to one shape pads another, a wave boundary moves, a row pitch leaves 32-byte sectors. So
// an entry also holds the next fastest configs its search timed and checked (alternates), and at
// other dims each candidate's measured time is carried over by the family's heuristic: the
// heuristic predicts a config's time as flops / preference, and the ratio of its predictions at the
// two shapes scales that config's own measurement. The least predicted time wins. Across configs
// the heuristic is a poor judge (its pick ran 0.89x cuBLAS where the tuned winner ran 1.04x), but
// for one config across nearby shapes it sees what changes: padding, waves, sectors, split and
// stream-K shares. At the entry's own dims, or without alternates, the winner is kept.
#include <cstdint>
#include <map>
#include <string>

#include "kiln/ir/operation.h"
#include "kiln/target.h"
#include "ops/tuning_cache.h"
#include "schedule/config.h"

namespace kiln::ops {

// The family heuristic's preference (higher is better) for GEMM config `c` at M x N x K (M counts
// a batch's rows too) on `t` with `sms` SMs: gemm_fp8's for an FP8 sm90_ws_persistent config,
// else gemm_bf16's. What kiln tune's space ranks by.
double gemmPreference(const Config& c, int64_t m, int64_t n, int64_t k, bool bKMajor, bool fp8, const Target& t,
                      int sms);

struct BucketChoice {
  std::string config;
  double predictedUs = 0;  // its time at the entry's dims carried to the lookup's (the measured one when kept)
  std::string why;         // empty when the winner is kept as measured
};

// The config the entry `e` gives `program` at `dims` on `t` with `sms` SMs (above).
BucketChoice chooseInBucket(const ir::Operation& program, const Target& t, int sms, const TunedEntry& e,
                            const std::map<std::string, int64_t>& dims);

}  // namespace kiln::ops
