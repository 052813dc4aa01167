#include "bench/read_ceiling.h"

#include "bench/bench_support.h"
#include "bench/read_ceiling_ptx.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kiln/runtime/launcher.h"
#include "kiln/runtime/module.h"
#include "kiln/runtime/stream.h"

namespace kiln::bench {

struct ReadCeiling::Impl {
  runtime::Context ctx;
  runtime::Module module;
  runtime::Function load, loadStream, tma, tmaStream;
  int sms;
  explicit Impl(const runtime::Context& c)
      : ctx(c),
        module(runtime::Module::load(c, readCeilingPtx(), "read ceiling")),
        load(module.function("kiln_read_ceiling")),
        loadStream(module.function("kiln_read_ceiling_stream")),
        tma(module.function("kiln_read_ceiling_tma", kTmaRingBytes)),
        tmaStream(module.function("kiln_read_ceiling_tma_stream", kTmaRingBytes)),
        sms(c.properties().smCount) {}
  // The largest ring below: 12 stages of 16 KB (192 KB of the 227 KB a block may have).
  static constexpr int kTmaRingBytes = 192 * 1024;
};

ReadCeiling::ReadCeiling(const runtime::Context& ctx) : impl_(std::make_unique<Impl>(ctx)) {}
ReadCeiling::~ReadCeiling() = default;

ReadCeiling::Result ReadCeiling::measure(size_t bytes, int warmup, int reps) {
  bytes &= ~size_t(15);
  DeviceBuffer src(bytes), out(4);
  check(cudaMemset(src.ptr, 1, bytes), "read-ceiling source");
  uint64_t srcPtr = uint64_t(src.ptr), n16 = bytes / 16, outPtr = uint64_t(out.ptr), bytes64 = bytes;
  Result best;
  best.ms = best.ldMs = best.tmaMs = best.plainMs = 1e30;
  auto time = [&](const runtime::Function& fn, uint32_t blocks, uint32_t threads, uint32_t smem,
                  std::initializer_list<void*> args) {
    std::vector<void*> a(args);
    return medianMs(
        [&](cudaStream_t st) {
          runtime::launch(fn, runtime::Dim3{blocks}, runtime::Dim3{threads}, {}, smem,
                          runtime::Stream::adopt(impl_->ctx, CUstream(st)), a);
        },
        warmup, reps, nullptr);
  };
  auto keep = [&](double ms, std::string how) {
    if (ms < best.ms) {
      best.ms = ms;
      best.how = std::move(how);
    }
  };
  for (bool evictFirst : {false, true}) {
    const char* policy = evictFirst ? ", evict_first" : "";
    // Loads: 512 threads a block, 2, 4 or 8 blocks per SM.
    for (int blocksPerSm : {2, 4, 8}) {
      double ms = time(evictFirst ? impl_->loadStream : impl_->load, uint32_t(impl_->sms * blocksPerSm), 512, 0,
                       {&srcPtr, &n16, &outPtr});
      if (!evictFirst) best.plainMs = std::min(best.plainMs, ms);
      best.ldMs = std::min(best.ldMs, ms);
      keep(ms, fmt::format("ld.global.nc, {} blocks/SM{}", blocksPerSm, policy));
    }
    // TMA: chunks of 8 to 32 KB, 96 to 192 KB in flight per SM (the GEMM's rings hold 192-216 KB).
    struct Ring {
      uint32_t chunk, stages, blocksPerSm;
    };
    for (Ring r : {Ring{16384, 12, 1}, Ring{32768, 6, 1}, Ring{8192, 12, 2}}) {
      uint32_t chunk = r.chunk, stages = r.stages;
      double ms = time(evictFirst ? impl_->tmaStream : impl_->tma, uint32_t(impl_->sms) * r.blocksPerSm, 32,
                       chunk * stages, {&srcPtr, &bytes64, &chunk, &stages});
      best.tmaMs = std::min(best.tmaMs, ms);
      keep(ms, fmt::format("TMA {} KB x {}, {} block{}/SM{}", chunk / 1024, stages, r.blocksPerSm,
                           r.blocksPerSm > 1 ? "s" : "", policy));
    }
  }
  return best;
}

}  // namespace kiln::bench
