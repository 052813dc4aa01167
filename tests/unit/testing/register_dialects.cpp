// The test binaries build and parse IR with the IR core directly, so they install the dialects
// before any test runs (kiln/dialects.h). An object file of the executable, so the linker keeps it.
#include "kiln/dialects.h"

namespace {
const bool registered = (kiln::registerAllDialects(), true);
}  // namespace
