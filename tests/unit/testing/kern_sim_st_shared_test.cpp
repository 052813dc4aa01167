// kern.st_shared's two-value form (st.shared.v2 of two 32-bit elements, sm90's staged f32
// epilogue) in the sm80 simulator (kern_sim.h): both elements land at the address and the next
// one, the eight bytes count for the race check, and a misaligned address is reported. (The
// warp-specialized simulator's reading is exercised by sm90_f32_tma_store_test.cpp.)
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "kiln/ir/parser.h"
#include "kiln/ir/verifier.h"
#include "tests/unit/testing/kern_sim.h"

namespace kiln::testing {
namespace {

// 64 threads (two warps). Thread t stores (t, t + 0.5) by one st.shared.v2 at row t, column
// 2 (t % 16) + ODD of a 128-byte-swizzled f32 buffer; after the barrier (BARRIER) it loads the pair
// thread 63 - t stored (the other warp's) and writes it to C[2t], C[2t + 1]. Returns what the
// simulator reported, or the first wrong element of C.
std::string pairsThrough(bool barrier, int odd) {
  std::string text = R"(kern.kernel() {sym_name = "k", params = ["C"], threads = 64, smem_bytes = 8192, grid = [1]} {
^bb0(%C: ptr<f32>):
  %sF = kern.smem_alloc() {offset = 0} : smem<f32, [1, 64, 32], swizzle = [3, 4, 3]>
  %z = arith.constant() {value = 0} : i32
  %one = arith.constant() {value = 1} : i32
  %two = arith.constant() {value = 2} : i32
  %c16 = arith.constant() {value = 16} : i32
  %c63 = arith.constant() {value = 63} : i32
  %odd = arith.constant() {value = ODD} : i32
  %half = arith.constant() {value = 0.5} : f32
  %t = kern.thread_id() : i32
  %q = arith.remsi(%t, %c16) : i32
  %q2 = arith.muli(%q, %two) : i32
  %col = arith.addi(%q2, %odd) : i32
  %o = kern.smem_offset(%sF, %t, %col) : i32
  %a = arith.cast(%t) : f32
  %b = arith.addf(%a, %half) : f32
  kern.st_shared(%sF, %z, %o, %a, %b) {row = 0, col = 0}
  BARRIER
  %u = arith.subi(%c63, %t) : i32
  %r = arith.remsi(%u, %c16) : i32
  %r2 = arith.muli(%r, %two) : i32
  %ucol = arith.addi(%r2, %odd) : i32
  %uo = kern.smem_offset(%sF, %u, %ucol) : i32
  %x = kern.ld_shared(%sF, %z, %uo) {row = 0, col = 0} : f32
  %ucol1 = arith.addi(%ucol, %one) : i32
  %uo1 = kern.smem_offset(%sF, %u, %ucol1) : i32
  %y = kern.ld_shared(%sF, %z, %uo1) {row = 0, col = 0} : f32
  %t2 = arith.muli(%t, %two) : i32
  %w = arith.cast(%t2) : i64
  %p = kern.ptr_add(%C, %w) : ptr<f32>
  %true = arith.constant() {value = true} : i1
  kern.st_global(%p, %true, %x, %y)
}
)";
  text.replace(text.find("ODD"), 3, std::to_string(odd));
  text.replace(text.find("BARRIER"), 7, barrier ? "kern.barrier()" : "");
  ir::DiagnosticEngine diag;
  auto module = ir::parseModule(text, diag);
  if (!module || !ir::verify(*module, diag)) return "parse: " + diag.str();
  GlobalMemory mem;
  uint64_t c = mem.add(std::vector<uint8_t>(128 * 4, 0));
  SimLaunch launch;
  launch.kernel = module->body().front();
  launch.args = {c};
  std::string err = simulate(launch, mem);
  if (!err.empty()) return err;
  for (int t = 0; t < 64; ++t)
    for (int i = 0; i < 2; ++i) {
      float v;
      std::memcpy(&v, mem.at(c).data() + 4 * (2 * t + i), 4);
      const float want = float(63 - t) + 0.5f * float(i);
      if (v != want) return "C[" + std::to_string(2 * t + i) + "] = " + std::to_string(v) + ", not " + std::to_string(want);
    }
  return "";
}

TEST(KernSimStShared, TwoValuesLandAtTheAddressAndTheNextElement) { EXPECT_EQ(pairsThrough(true, 0), ""); }

TEST(KernSimStShared, AnotherWarpsPairIsARaceWithoutTheBarrier) {
  std::string err = pairsThrough(false, 0);
  EXPECT_EQ(err.rfind("shared-memory race: kern.ld_shared by thread 0 at byte ", 0), 0u) << err;
}

TEST(KernSimStShared, AMisalignedPairIsReported) {
  // Column 1: the pair's address is 4 bytes past an 8-byte boundary.
  EXPECT_EQ(pairsThrough(true, 1), "st.shared.v2 by thread 0 at byte 4, which is not 8-byte aligned");
}

}  // namespace
}  // namespace kiln::testing
