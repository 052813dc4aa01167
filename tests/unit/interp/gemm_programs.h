#pragma once
// The six GEMM-family programs the interpreter tests run, in text form (what the C++ DSL will
// produce for them). Each is checked against plain fp64 loops in its own test file.
namespace kiln::interp::testing {

// C = A @ B, bf16 in and out, f32 accumulation.
inline constexpr const char* kBf16Gemm = R"(tile.program() {sym_name = "gemm", dims = ["M", "N", "K"]} {
  %A = tile.input() {name = "A"} : tensor<bf16, [M, K]>
  %B = tile.input() {name = "B"} : tensor<bf16, [K, N]>
  %C = tile.output() {name = "C"} : tensor<bf16, [M, N]>
  tile.for_tiles() {dims = ["M", "N"]} {
  ^bb0(%m: coord<[M]>, %n: coord<[N]>):
    %0 = tile.constant() {value = 0.0} : tile<f32, [M, N]>
    %acc = tile.reduce(%0) {dim = "K"} : tile<f32, [M, N]> {
    ^bb0(%k: coord<[K]>, %a: tile<f32, [M, N]>):
      %1 = tile.load(%A, %m, %k) : tile<bf16, [M, K]>
      %2 = tile.load(%B, %k, %n) : tile<bf16, [K, N]>
      %3 = tile.dot(%1, %2, %a) : tile<f32, [M, N]>
      tile.yield(%3)
    }
    %4 = tile.cast(%acc) : tile<bf16, [M, N]>
    tile.store(%C, %m, %n, %4)
    tile.yield()
  }
}
)";

// C = gelu_tanh(A @ B + bias), bias f32 [N] added to every row, bf16 out.
inline constexpr const char* kGemmBiasGelu = R"(tile.program() {sym_name = "gemm_bias_gelu", dims = ["M", "N", "K"]} {
  %A = tile.input() {name = "A"} : tensor<bf16, [M, K]>
  %B = tile.input() {name = "B"} : tensor<bf16, [K, N]>
  %bias = tile.input() {name = "bias"} : tensor<f32, [N]>
  %C = tile.output() {name = "C"} : tensor<bf16, [M, N]>
  tile.for_tiles() {dims = ["M", "N"]} {
  ^bb0(%m: coord<[M]>, %n: coord<[N]>):
    %0 = tile.constant() {value = 0.0} : tile<f32, [M, N]>
    %acc = tile.reduce(%0) {dim = "K"} : tile<f32, [M, N]> {
    ^bb0(%k: coord<[K]>, %a: tile<f32, [M, N]>):
      %1 = tile.load(%A, %m, %k) : tile<bf16, [M, K]>
      %2 = tile.load(%B, %k, %n) : tile<bf16, [K, N]>
      %3 = tile.dot(%1, %2, %a) : tile<f32, [M, N]>
      tile.yield(%3)
    }
    %b = tile.load(%bias, %n) : tile<f32, [N]>
    %bb = tile.broadcast(%b) : tile<f32, [M, N]>
    %s = tile.add(%acc, %bb) : tile<f32, [M, N]>
    %g = tile.gelu_tanh(%s) : tile<f32, [M, N]>
    %4 = tile.cast(%g) : tile<bf16, [M, N]>
    tile.store(%C, %m, %n, %4)
    tile.yield()
  }
}
)";

// C[b] = A[b] @ W[b] for every b of the batch dim B.
inline constexpr const char* kBatchedGemm = R"(tile.program() {sym_name = "batched_gemm", dims = ["B", "M", "N", "K"]} {
  %A = tile.input() {name = "A"} : tensor<bf16, [B, M, K]>
  %W = tile.input() {name = "W"} : tensor<bf16, [B, K, N]>
  %C = tile.output() {name = "C"} : tensor<bf16, [B, M, N]>
  tile.for_tiles() {dims = ["M", "N"], batch = "B"} {
  ^bb0(%b: index, %m: coord<[M]>, %n: coord<[N]>):
    %0 = tile.constant() {value = 0.0} : tile<f32, [M, N]>
    %acc = tile.reduce(%0) {dim = "K"} : tile<f32, [M, N]> {
    ^bb0(%k: coord<[K]>, %a: tile<f32, [M, N]>):
      %1 = tile.load(%A, %b, %m, %k) : tile<bf16, [M, K]>
      %2 = tile.load(%W, %b, %k, %n) : tile<bf16, [K, N]>
      %3 = tile.dot(%1, %2, %a) : tile<f32, [M, N]>
      tile.yield(%3)
    }
    %4 = tile.cast(%acc) : tile<bf16, [M, N]>
    tile.store(%C, %b, %m, %n, %4)
    tile.yield()
  }
}
)";

// C = A @ B with B stored K-major: element (k, n) at k + n * K.
inline constexpr const char* kKMajorGemm = R"(tile.program() {sym_name = "gemm_kmajor_b", dims = ["M", "N", "K"]} {
  %A = tile.input() {name = "A"} : tensor<bf16, [M, K]>
  %B = tile.input() {name = "B"} : tensor<bf16, [K, N], order = [0, 1]>
  %C = tile.output() {name = "C"} : tensor<bf16, [M, N]>
  tile.for_tiles() {dims = ["M", "N"]} {
  ^bb0(%m: coord<[M]>, %n: coord<[N]>):
    %0 = tile.constant() {value = 0.0} : tile<f32, [M, N]>
    %acc = tile.reduce(%0) {dim = "K"} : tile<f32, [M, N]> {
    ^bb0(%k: coord<[K]>, %a: tile<f32, [M, N]>):
      %1 = tile.load(%A, %m, %k) : tile<bf16, [M, K]>
      %2 = tile.load(%B, %k, %n) : tile<bf16, [K, N]>
      %3 = tile.dot(%1, %2, %a) : tile<f32, [M, N]>
      tile.yield(%3)
    }
    %4 = tile.cast(%acc) : tile<bf16, [M, N]>
    tile.store(%C, %m, %n, %4)
    tile.yield()
  }
}
)";

// C = (A @ B) * scale_a[m] * scale_b[n], A and B in f8e4m3, bf16 out.
inline constexpr const char* kFp8ScaledGemm = R"(tile.program() {sym_name = "fp8_scaled_gemm", dims = ["M", "N", "K"]} {
  %A = tile.input() {name = "A"} : tensor<f8e4m3, [M, K]>
  %B = tile.input() {name = "B"} : tensor<f8e4m3, [K, N]>
  %sa = tile.input() {name = "scale_a"} : tensor<f32, [M]>
  %sb = tile.input() {name = "scale_b"} : tensor<f32, [N]>
  %C = tile.output() {name = "C"} : tensor<bf16, [M, N]>
  tile.for_tiles() {dims = ["M", "N"]} {
  ^bb0(%m: coord<[M]>, %n: coord<[N]>):
    %0 = tile.constant() {value = 0.0} : tile<f32, [M, N]>
    %acc = tile.reduce(%0) {dim = "K"} : tile<f32, [M, N]> {
    ^bb0(%k: coord<[K]>, %a: tile<f32, [M, N]>):
      %1 = tile.load(%A, %m, %k) : tile<f8e4m3, [M, K]>
      %2 = tile.load(%B, %k, %n) : tile<f8e4m3, [K, N]>
      %3 = tile.dot(%1, %2, %a) : tile<f32, [M, N]>
      tile.yield(%3)
    }
    %ra = tile.load(%sa, %m) : tile<f32, [M]>
    %rb = tile.load(%sb, %n) : tile<f32, [N]>
    %s1 = tile.scale(%acc, %ra) : tile<f32, [M, N]>
    %s2 = tile.scale(%s1, %rb) : tile<f32, [M, N]>
    %4 = tile.cast(%s2) : tile<bf16, [M, N]>
    tile.store(%C, %m, %n, %4)
    tile.yield()
  }
}
)";

// C[m] = A[m] @ B[ids[m]]: rows are grouped (MoE), each group padded to a multiple of 64 rows.
inline constexpr const char* kGroupedGemm = R"(tile.program() {sym_name = "grouped_gemm", dims = ["M", "N", "K", "G"]} {
  %A = tile.input() {name = "A"} : tensor<bf16, [M, K]>
  %B = tile.input() {name = "B"} : tensor<bf16, [G, K, N]>
  %ids = tile.input() {name = "ids"} : tensor<i32, [M]>
  %C = tile.output() {name = "C"} : tensor<bf16, [M, N]>
  tile.for_tiles() {dims = ["M", "N"]} {
  ^bb0(%m: coord<[M]>, %n: coord<[N]>):
    %g = tile.group_index(%ids, %m) {align = 64} : index
    %0 = tile.constant() {value = 0.0} : tile<f32, [M, N]>
    %acc = tile.reduce(%0) {dim = "K"} : tile<f32, [M, N]> {
    ^bb0(%k: coord<[K]>, %a: tile<f32, [M, N]>):
      %1 = tile.load(%A, %m, %k) : tile<bf16, [M, K]>
      %2 = tile.load(%B, %g, %k, %n) : tile<bf16, [K, N]>
      %3 = tile.dot(%1, %2, %a) : tile<f32, [M, N]>
      tile.yield(%3)
    }
    %4 = tile.cast(%acc) : tile<bf16, [M, N]>
    tile.store(%C, %m, %n, %4)
    tile.yield()
  }
}
)";

}  // namespace kiln::interp::testing
