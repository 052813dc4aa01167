#pragma once
// What `kiln inspect` reports for one compiled kernel: the resource report and a static
// instruction mix from the disassembly (the counts the sm80 and sm90 gates reason about).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/compile.h"
#include "kiln/resource_report.h"
#include "kiln/sass_stats.h"

namespace kiln::driver {

struct InstructionMix {
  int ldsmX4 = 0, ldsmX2 = 0, ldsmX1 = 0;  // ldmatrix by width
  int hmma = 0, hgmma = 0, qgmma = 0;       // mma.sync, wgmma (16-bit operands), wgmma (FP8)
  int ldgsts = 0;                           // cp.async
  int utmaldg = 0, utmastg = 0;             // TMA load / store
  int ldl = 0, stl = 0;                     // local memory: spills or dynamically indexed arrays
  int wgmmaR2ur = 0;                        // R2UR on wgmma batches' issue path (SassStats)
  int total = 0;
};
InstructionMix instructionMix(const backend::SassStats& sass);

struct InspectRow {
  std::string name;    // a variant or program name
  std::string config;  // the schedule
  backend::ResourceReport resources;
  int64_t dynamicSmemBytes = 0;
  std::optional<InstructionMix> mix;  // absent when no disassembler is installed
};

nlohmann::json toJson(const InspectRow& row);
std::string tableHeader();
std::string tableRow(const InspectRow& row);

}  // namespace kiln::driver
