#pragma once
// Kiln's public API in one include (docs/api.md says what is stable and what is not).
//
//   #include <kiln/kiln.h>
//   kiln::registerAllDialects();
//   kiln::ProgramBuilder p("gemm");  ...  auto program = p.finish();
//   kiln::Selection s = kiln::select(*program, kiln::Target::sm90a(), {{"M", 4096}, {"N", 4096}, {"K", 4096}});
//   kiln::ir::DiagnosticEngine diag;
//   auto kernel = kiln::Kernel::build(*program, kiln::Target::sm90a(), s.config, diag);  // no GPU needed
//   std::puts(kernel->resources().str().c_str());
//
// Only headers under include/kiln/ are installed, and none of them includes one from src/.
#include "kiln/compile.h"
#include "kiln/config.h"
#include "kiln/dialects.h"
#include "kiln/interp/host_tensor.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/diagnostics.h"
#include "kiln/ir/operation.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/types.h"
#include "kiln/ir/verifier.h"
#include "kiln/kernel.h"
#include "kiln/program_builder.h"
#include "kiln/resource_report.h"
#include "kiln/runtime/device.h"
#include "kiln/runtime/memory.h"
#include "kiln/runtime/stream.h"
#include "kiln/sass_stats.h"
#include "kiln/select.h"
#include "kiln/target.h"
#include "kiln/tune.h"
