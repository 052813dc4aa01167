// kern.prefetch_global in the sm80 simulator (kern_sim.h): a prefetch changes no value, and where
// its predicate holds its address must lie inside a buffer, as a load's; a predicated-off prefetch
// touches nothing. (The warp-specialized simulator's reading is exercised by
// Sm90Fp8Functional.PrefetchesOutsideTheScalesAreCaught.)
#include <gtest/gtest.h>

#include <string>

#include "kiln/ir/parser.h"
#include "tests/unit/testing/kern_sim.h"

namespace kiln::testing {
namespace {

// Thread t of 32 prefetches element t + offset of p[32], under t + offset < 32 or unconditionally;
// returns what the simulator reported.
std::string prefetchFrom(int offset, bool masked) {
  std::string text = R"(kern.kernel() {sym_name = "k", params = ["p", "n"], threads = 32, smem_bytes = 0, grid = [1]} {
^bb0(%p: ptr<f32>, %n: i32):
  %t = kern.thread_id() : i32
  %o = arith.constant() {value = OFFSET} : i32
  %i = arith.addi(%t, %o) : i32
  %in = arith.cmpi(%i, %n) {pred = "slt"} : i1
  %all = arith.constant() {value = true} : i1
  %w = arith.cast(%i) : i64
  %q = kern.ptr_add(%p, %w) : ptr<f32>
  kern.prefetch_global(%q, PRED) {level = "L1"}
}
)";
  text.replace(text.find("OFFSET"), 6, std::to_string(offset));
  text.replace(text.find("PRED"), 4, masked ? "%in" : "%all");
  ir::DiagnosticEngine diag;
  auto module = ir::parseModule(text, diag);
  if (!module) return "parse: " + diag.str();
  GlobalMemory mem;
  std::vector<uint8_t> bytes(32 * 4, 0x5A);
  uint64_t p = mem.add(bytes);
  SimLaunch launch;
  launch.kernel = module->body().front();
  launch.args = {p, 32};
  std::string err = simulate(launch, mem);
  if (err.empty() && mem.at(p) != bytes) return "the prefetch changed memory";
  return err;
}

TEST(KernSimPrefetch, InsideTheBufferOrMaskedOffItIsSilent) {
  EXPECT_EQ(prefetchFrom(0, false), "");
  EXPECT_EQ(prefetchFrom(16, true), "");
}

TEST(KernSimPrefetch, PastTheBufferItIsReported) {
  std::string err = prefetchFrom(16, false);
  EXPECT_NE(err.find("out of bounds"), std::string::npos) << err;
}

}  // namespace
}  // namespace kiln::testing
