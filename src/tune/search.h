#pragma once
// The search behind kiln::tune (kiln/tune.h), on a target and device named rather than found, with
// the measurer given: kiln::tune passes the GPU's (tune/measure.h), tests a scripted one.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "kiln/tune.h"
#include "ops/tuning_cache.h"
#include "tune/measure.h"

namespace kiln::tuning {

// Makes the measurer for the program once the candidates are compiled (nullptr after a diagnostic).
using MeasurerFactory = std::function<std::unique_ptr<Measurer>(const ir::Operation& program, ir::DiagnosticEngine&)>;

std::optional<TuneResult> search(const ir::Module& module, const Target& target, const ops::DeviceIdentity& device,
                                 const std::map<std::string, int64_t>& dims, const TuneOptions& options,
                                 const MeasurerFactory& makeMeasurer, ir::DiagnosticEngine& diag);

}  // namespace kiln::tuning
