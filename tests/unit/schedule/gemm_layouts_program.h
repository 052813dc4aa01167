#pragma once
// The layouts functional tests' program (sm80_layouts_functional_test.cpp,
// sm90_layouts_functional_test.cpp): C[b] = A[b] B[b] with A and B each row- or column-major,
// strided or dense, batched or not, and the dims that give every leading dimension room.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/program_builder.h"

namespace kiln::layouts {

struct Layout {
  bool aCol = false, bKMajor = false;  // A stored [K][M] (column-major), B stored [N][K]
  bool aStrided = false, bStrided = false, cStrided = false;
  ScalarType in = bf16, out = bf16;
  bool batched = false;
  bool bShared = false;  // batched: one B for every batch (batch stride 0)
};

// C[b] = A[b] B[b] with the layouts asked; strides are the dims lda, ldb, ldc (and sa, sb, sc for
// the batch strides).
inline std::unique_ptr<ir::Module> gemm(const Layout& l) {
  ProgramBuilder p("gemm_layouts");
  auto [M, N, K, lda, ldb] = p.dims("M", "N", "K", "lda", "ldb");
  auto [ldc, Bt, sa, sc] = p.dims("ldc", "Bt", "sa", "sc");
  std::vector<Ext> sA = {M, K}, sB = {K, N}, sC = {M, N};
  if (l.batched) sA.insert(sA.begin(), Bt), sB.insert(sB.begin(), Bt), sC.insert(sC.begin(), Bt);
  auto strided = [&](std::vector<Ext> inner, Ext batch) {
    if (l.batched) inner.insert(inner.begin(), batch);
    return Strides(inner);
  };
  Tensor A = l.aStrided ? p.input("A", l.in, sA, strided(l.aCol ? std::vector<Ext>{1, lda} : std::vector<Ext>{lda, 1}, sa))
             : l.aCol   ? p.input("A", l.in, sA, l.batched ? std::vector<int64_t>{1, 2, 0} : std::vector<int64_t>{0, 1})
                        : p.input("A", l.in, sA);
  Ext bBatch = l.bShared ? Ext(0) : Ext(Bt);  // a dense batch stride is never asked for: see below
  Tensor B = l.bStrided ? p.input("B", l.in, sB,
                                  strided(l.bKMajor ? std::vector<Ext>{1, ldb} : std::vector<Ext>{ldb, 1}, bBatch))
             : l.bKMajor ? p.input("B", l.in, sB, l.batched ? std::vector<int64_t>{1, 2, 0} : std::vector<int64_t>{0, 1})
                         : p.input("B", l.in, sB);
  Tensor C = l.cStrided ? p.output("C", l.out, sC, strided({ldc, 1}, sc)) : p.output("C", l.out, sC);
  auto body = [&](auto... idx) {
    auto run = [&](auto b, Coord m, Coord n) {
      Tile acc = p.zeros(f32, {m, n});
      p.reduce(K, [&](Coord k) {
        if constexpr (std::is_same_v<decltype(b), Index>) acc = dot(A(b, m, k), B(b, k, n), acc);
        else acc = dot(A(m, k), B(k, n), acc);
      });
      if constexpr (std::is_same_v<decltype(b), Index>) C(b, m, n) = cast(l.out, acc);
      else C(m, n) = cast(l.out, acc);
    };
    run(idx...);
  };
  if (l.batched)
    p.tile_batched(Bt, {M, N}, [&](Index b, Coord m, Coord n) { body(b, m, n); });
  else
    p.tile({M, N}, [&](Coord m, Coord n) { body(0, m, n); });
  return p.finish();
}

inline std::map<std::string, int64_t> dimsFor(int64_t m, int64_t n, int64_t k, int64_t pad = 0, int64_t batch = 1) {
  // Leading dimensions `pad` past the longest row any layout needs (A's M or K, B's K or N).
  int64_t lda = std::max(m, k) + pad, ldb = std::max(k, n) + pad, ldc = n + pad;
  return {{"M", m}, {"N", n}, {"K", k}, {"lda", lda}, {"ldb", ldb}, {"ldc", ldc}, {"Bt", batch},
          {"sa", lda * std::max(m, k) + 8}, {"sc", ldc * m + 8}};
}

}  // namespace kiln::layouts
