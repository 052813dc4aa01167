#pragma once
// A tuning key and entry with every field set, for the tuning cache's tests.
#include <string>
#include <utility>

#include "ops/tuning_cache.h"

namespace kiln::ops {

inline TuningKey sampleKey() {
  TuningKey k;
  k.programHash = std::string(64, 'a');
  k.target = "sm_90a";
  k.device = {"NVIDIA H200", 132, 12080};
  k.bucket = {{"K", 48}, {"M", 48}, {"N", 48}};
  return k;
}

inline TunedEntry sampleEntry(std::string config = "strategy=sm90_ws_persistent bm=128 bn=256 bk=64 stages=4") {
  TunedEntry e;
  e.config = std::move(config);
  e.microseconds = 412.625;
  e.dims = {{"K", 4096}, {"M", 4096}, {"N", 4500}};
  e.candidatesTimed = 37;
  e.candidatesTotal = 48;
  e.tuneSeconds = 21.5;
  e.date = "2025-01-31T12:00:00Z";
  e.source = "tuned";
  return e;
}

}  // namespace kiln::ops
