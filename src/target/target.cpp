// The architecture table (numbers and sources in target.h).
#include "target/target.h"

namespace kiln {

bool Target::has(MmaKind k) const {
  switch (k) {
    case MmaKind::MmaSync: return mmaSync;
    case MmaKind::Wgmma: return wgmma;
    case MmaKind::Tcgen05: return tcgen05;
  }
  return false;
}

std::string Target::ptxVersion() const { return std::to_string(ptxIsaMajor) + "." + std::to_string(ptxIsaMinor); }

Target Target::sm80() {
  Target t;
  t.name = "sm_80";
  t.sm = 80;
  t.ptxTarget = "sm_80";
  t.ptxIsaMajor = 7;
  t.ptxIsaMinor = 0;
  t.maxSmemPerBlock = 163 * 1024;
  t.smemPerSm = 164 * 1024;
  return t;
}

Target Target::sm89() {
  Target t;
  t.name = "sm_89";
  t.sm = 89;
  t.ptxTarget = "sm_89";
  t.ptxIsaMajor = 7;
  t.ptxIsaMinor = 8;
  t.mmaSyncFp8 = true;
  t.cvtFp8 = true;
  t.maxSmemPerBlock = 99 * 1024;
  t.smemPerSm = 100 * 1024;
  t.referenceSms = 142;
  t.referenceL2Bytes = 96ll << 20;
  return t;
}

Target Target::sm90() {
  Target t;
  t.name = "sm_90";
  t.sm = 90;
  t.ptxTarget = "sm_90";
  t.ptxIsaMajor = 7;
  t.ptxIsaMinor = 8;
  t.mmaSyncFp8 = true;
  t.cvtFp8 = true;
  t.tma = true;
  t.clusters = true;
  t.maxSmemPerBlock = 227 * 1024;
  t.smemPerSm = 228 * 1024;
  t.referenceSms = 132;
  t.referenceL2Bytes = 50ll << 20;
  t.referenceClustersOf4 = 30;
  return t;
}

Target Target::sm90a() {
  Target t = sm90();
  t.name = "sm_90a";
  t.ptxTarget = "sm_90a";
  t.archSpecific = true;
  t.ptxIsaMinor = 0;
  t.ptxIsaMajor = 8;
  t.wgmma = true;
  t.setmaxnreg = true;
  return t;
}

Target Target::sm100a() {
  Target t;
  t.name = "sm_100a";
  t.sm = 100;
  t.ptxTarget = "sm_100a";
  t.archSpecific = true;
  t.ptxIsaMajor = 8;
  t.ptxIsaMinor = 6;
  t.mmaSyncFp8 = true;
  t.cvtFp8 = true;
  t.tcgen05 = true;
  t.tma = true;
  t.clusters = true;
  t.setmaxnreg = true;
  t.maxSmemPerBlock = 227 * 1024;
  t.smemPerSm = 228 * 1024;
  t.referenceSms = 148;
  t.referenceL2Bytes = 126ll << 20;
  return t;
}

Target Target::sm120() {
  Target t;
  t.name = "sm_120";
  t.sm = 120;
  t.ptxTarget = "sm_120";
  t.ptxIsaMajor = 8;
  t.ptxIsaMinor = 7;
  t.mmaSyncFp8 = true;
  t.cvtFp8 = true;
  t.tma = true;
  t.clusters = true;
  t.maxSmemPerBlock = 99 * 1024;
  t.smemPerSm = 128 * 1024;
  t.referenceSms = 170;
  t.referenceL2Bytes = 96ll << 20;
  return t;
}

const std::vector<Target>& Target::all() {
  static const std::vector<Target> targets = {sm80(), sm89(), sm90(), sm90a(), sm100a(), sm120()};
  return targets;
}

std::optional<Target> Target::byName(std::string_view name) {
  for (const Target& t : all()) {
    if (t.name == name) return t;
    // Accept "sm80" for "sm_80".
    std::string compact = "sm" + t.name.substr(3);
    if (compact == name) return t;
  }
  return std::nullopt;
}

std::string Target::knownNames() {
  std::string s;
  for (const Target& t : all()) s += (s.empty() ? "" : ", ") + t.name;
  return s;
}

}  // namespace kiln
