#pragma once
// The launch contract a kern.kernel carries, typed (kiln/compile.h says what the runtime does with
// it). A strategy fills a KernelLaunch and writes it with kernelAttributes(); kiln::compile reads
// it back with kernelLaunchOf(). The text form keeps one attribute per field, so a kernel printed
// and parsed again carries the same contract, and the kern.kernel verifier (kern_dialect.cpp)
// checks each field's shape with its own message:
//
//   params = ["A", "B", ...]                  the body arguments' names, in order
//   threads = 256, smem_bytes = 98304         block size and dynamic shared memory
//   grid = [x, y?, z?]                        an axis is a positive integer or [dim, tile, ...,
//                                             factor?]: factor times the product of ceil(dim / tile)
//   requires = [["K", 8], ...]                dims that must be multiples of a value
//   align = [["A", 16], ...]                  pointers' byte alignment beyond their element's
//   persistent = true                         grid x capped by the SM count
//   persistent_per_sm = 2                     ... times this (when more than 1)
//   cluster = [2, 1, 1]                       the thread-block cluster shape
//   workspace = [F, P], workspace_per = "block"   split-K / stream-K scratch (kern_ops.h)
//   streams = [[map, dim, bound, dim, multiple, fill], ...]   when an operand may stream (config.h)
//   programmatic = true                       launched as a programmatic dependent (sm90 pdl)
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/operation.h"

namespace kiln::kern {

struct KernelLaunch {
  struct Axis {
    int64_t factor = 1;
    std::vector<std::pair<std::string, int64_t>> tiles;  // (dim, tile): times ceil(dim / tile)
    bool constantOnly() const { return tiles.empty(); }
  };
  struct Stream {
    std::string map, boundDim;
    int64_t bound = 0;
    std::string rowDim;
    int64_t rowMultiple = 1;
    int64_t fillBytes = 0;
  };
  std::string name;                 // sym_name
  std::vector<std::string> params;  // one per body argument
  int64_t threads = 0;
  int64_t smemBytes = 0;
  std::vector<Axis> grid;
  std::vector<std::pair<std::string, int64_t>> divisibility;  // requires
  std::vector<std::pair<std::string, int64_t>> alignment;     // align
  bool persistent = false;
  int64_t persistentPerSm = 1;  // blocks of a persistent grid per SM
  std::optional<std::array<int64_t, 3>> cluster;
  std::optional<std::array<int64_t, 2>> workspace;  // bytes of ws_flags, ws_partials per unit
  bool workspacePerBlock = false;
  std::vector<Stream> streams;
  bool programmatic = false;  // launched with programmatic stream serialization (sm90 pdl)

  // Adds `dim` % `multiple` == 0 to the requirements, once per dim (the strictest asked: a multiple
  // that the one already there divides replaces it); multiples up to 1 ask nothing.
  void requireMultiple(const std::string& dim, int64_t multiple);
};

// The kern.kernel attributes of `l`, in the order the kernel prints them, with `provenance` (what
// it was compiled for: target, config) after the launch requirements.
std::vector<ir::NamedAttr> kernelAttributes(const KernelLaunch& l, std::vector<ir::NamedAttr> provenance = {});

// The contract of a verified kern.kernel.
KernelLaunch kernelLaunchOf(const ir::Operation& kernel);

}  // namespace kiln::kern
