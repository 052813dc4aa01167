#include "driver/inspect.h"

#include <fmt/format.h>

#include "backend/resource_report_json.h"

namespace kiln::driver {

InstructionMix instructionMix(const backend::SassStats& sass) {
  InstructionMix m;
  for (const auto& [op, n] : sass.opcodes) {
    if (op.rfind("LDSM", 0) == 0) {
      // LDSM.16.M88.4 / LDSM.16.MT88.2 / LDSM.16.M88 (one matrix): the width is the last modifier.
      if (op.size() > 2 && op.compare(op.size() - 2, 2, ".4") == 0) m.ldsmX4 += n;
      else if (op.size() > 2 && op.compare(op.size() - 2, 2, ".2") == 0) m.ldsmX2 += n;
      else m.ldsmX1 += n;
    }
  }
  m.hmma = sass.count("HMMA");
  m.hgmma = sass.count("HGMMA");
  m.qgmma = sass.count("QGMMA");
  m.ldgsts = sass.count("LDGSTS");
  m.utmaldg = sass.count("UTMALDG");
  m.utmastg = sass.count("UTMASTG");
  m.ldl = sass.count("LDL");
  m.stl = sass.count("STL");
  m.wgmmaR2ur = sass.wgmmaBatchR2ur;
  m.total = sass.total();
  return m;
}

nlohmann::json toJson(const InspectRow& r) {
  nlohmann::json j = {{"name", r.name}, {"config", r.config}, {"resources", backend::toJson(r.resources)},
                      {"dynamic_smem_bytes", r.dynamicSmemBytes}};
  if (r.mix) {
    const auto& m = *r.mix;
    j["sass"] = {{"LDSM.x4", m.ldsmX4}, {"LDSM.x2", m.ldsmX2}, {"LDSM.x1", m.ldsmX1}, {"HMMA", m.hmma},
                 {"HGMMA", m.hgmma},    {"QGMMA", m.qgmma},    {"LDGSTS", m.ldgsts},  {"UTMALDG", m.utmaldg}, {"UTMASTG", m.utmastg},
                 {"LDL", m.ldl},        {"STL", m.stl},        {"wgmma_R2UR", m.wgmmaR2ur}, {"total", m.total}};
  }
  return j;
}

std::string tableHeader() {
  return fmt::format("{:<28} {:>5} {:>6} {:>8} {:>8} {:>8} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6} {:>7} {:>7} {:>5} {:>5} {:>9}\n",
                     "kernel", "regs", "stack", "spill.st", "spill.ld", "smem", "LDSM.4", "LDSM.2", "LDSM.1",
                     "HMMA", "HGMMA", "QGMMA", "LDGSTS", "UTMALDG", "LDL", "STL", "desc.R2UR");
}

std::string tableRow(const InspectRow& r) {
  const auto& res = r.resources;
  std::string head = fmt::format("{:<28} {:>5} {:>6} {:>8} {:>8} {:>8}", r.name, res.registers, res.stackFrameBytes,
                                 res.spillStoreBytes, res.spillLoadBytes, res.sharedBytes + r.dynamicSmemBytes);
  if (!r.mix) return head + "   (no disassembler: pip install nvidia-cuda-nvdisasm)\n";
  const auto& m = *r.mix;
  return head + fmt::format(" {:>7} {:>7} {:>7} {:>6} {:>6} {:>6} {:>7} {:>7} {:>5} {:>5} {:>9}\n", m.ldsmX4, m.ldsmX2,
                            m.ldsmX1, m.hmma, m.hgmma, m.qgmma, m.ldgsts, m.utmaldg, m.ldl, m.stl, m.wgmmaR2ur);
}

}  // namespace kiln::driver
