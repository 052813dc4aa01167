// Every built-in example compiles, assembles and interprets with the defaults `kiln compile`,
// `kiln inspect` and `kiln run` use (no --config: the sm80 default fitted to the program for a
// GEMM, the rowwise pick for the rest) on every target Kiln knows. The only exception is an
// example the target cannot run at all (FP8 on sm_80), which must say so.
#include <gtest/gtest.h>

#include "backend/assembler.h"
#include "examples/examples.h"
#include "interp/interpret_command.h"
#include "kiln/compile.h"
#include "kiln/ir/printer.h"
#include "ops/default_schedule.h"

namespace kiln {
namespace {

Config defaultsFor(const examples::Example& e, const ir::Operation& program, const Target& t) {
  if (e.gemm) return ops::fallbackSchedule(program);
  std::map<std::string, int64_t> dims;
  for (const auto& d : program.stringsAttr("dims")) dims[d] = 4096;
  return ops::defaultSchedule(program, t, dims).config;
}

TEST(ExampleDefaults, EveryExampleCompilesAndAssemblesOnEveryTarget) {
  for (const auto& e : examples::all()) {
    auto module = e.build();
    const ir::Operation& program = *module->body().front();
    for (const Target& t : Target::all()) {
      SCOPED_TRACE(e.name + " on " + t.name);
      Config config = defaultsFor(e, program, t);
      ir::DiagnosticEngine diag;
      auto r = compile(*module, t, config, diag);
      if (!r && t.name == "sm_80" && diag.str().find("needs sm_89 or newer") != std::string::npos) continue;
      ASSERT_TRUE(r) << config.str() << "\n" << diag.str();
      auto cubin = backend::assemble(r->ptx, t.ptxTarget, diag);
      ASSERT_TRUE(cubin) << config.str() << "\n" << diag.str();
      for (const auto& [kernel, res] : cubin->resources)
        EXPECT_EQ(res.spillStoreBytes + res.spillLoadBytes, 0) << kernel << " spills with " << config.str();
    }
  }
}

TEST(ExampleDefaults, EveryExampleInterpretsOnSmallDims) {
  for (const auto& e : examples::all()) {
    SCOPED_TRACE(e.name);
    auto module = e.build();
    std::string dims;
    for (const auto& d : module->body().front()->stringsAttr("dims")) dims += (dims.empty() ? "" : ",") + d + "=64";
    ir::DiagnosticEngine diag;
    std::string report = interp::runInterpretCommand(ir::toString(*module), dims, 1, diag);
    EXPECT_FALSE(report.empty()) << diag.str();
    EXPECT_FALSE(diag.hadError()) << diag.str();
  }
}

}  // namespace
}  // namespace kiln
