#pragma once
// The JSON form of a ResourceReport, for the compile cache and `kiln inspect --json`. Kept out of
// the public header so that installing Kiln does not make nlohmann_json part of its interface.
#include <nlohmann/json.hpp>

#include "kiln/resource_report.h"

namespace kiln::backend {

// {"kernel", "registers", "barriers", "stack_frame_bytes", "spill_store_bytes", "spill_load_bytes",
//  "shared_bytes", "const_bytes"}
nlohmann::json toJson(const ResourceReport& r);
// Inverse of toJson; returns false (leaving `out` unspecified) when a field is missing or mistyped.
bool fromJson(const nlohmann::json& j, ResourceReport& out);

}  // namespace kiln::backend
