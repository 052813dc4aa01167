#include "tune/measure.h"

#include <algorithm>

#include "interp/random_inputs.h"
#include "interp/tile_sampler.h"
#include "interp/verify_outputs.h"
#include "kiln/interp/interpreter.h"
#include "kiln/runtime/memory.h"
#include "kiln/runtime/stream.h"

namespace kiln::tuning {
namespace {

class GpuMeasurer : public Measurer {
 public:
  GpuMeasurer(const runtime::Context& ctx, const ir::Operation& program, std::map<std::string, int64_t> dims,
              uint64_t seed)
      : ctx_(ctx), program_(program), dims_(std::move(dims)), seed_(seed),
        args_(interp::generateArguments(program, dims_, seed)),
        // Larger than any L2 (the H200's is 60 MB) and than twice this device's.
        flush_(runtime::DeviceBuffer::allocate(ctx, std::max<size_t>(size_t(256) << 20, 2 * size_t(ctx.properties().l2Bytes)))) {
    for (const auto& op : program.body().operations()) {
      if (op->is("tile.scalar")) scalars_.push_back(args_.request.scalars.at(op->stringAttr("name")));
      if (!op->is("tile.input") && !op->is("tile.output")) continue;
      const std::string name = op->stringAttr("name");
      const interp::HostTensor& t = args_.tensors.at(name);
      buffers_.push_back(runtime::DeviceBuffer::allocate(ctx, std::max<size_t>(t.bytes.size(), 1)));
      if (op->is("tile.input")) buffers_.back().copyFromHost(t.bytes.data(), t.bytes.size());
      else buffers_.back().fill(0x7f);
      ptrs_.push_back(buffers_.back().ptr());
      outputs_.push_back(op->is("tile.output") ? name : "");
    }
  }

  std::vector<Timing> time(const std::vector<const Kernel*>& kernels, int reps) override {
    std::vector<Timing> out(kernels.size());
    std::vector<std::vector<double>> samples(kernels.size());
    runtime::Stream s = runtime::Stream::adopt(ctx_, nullptr);  // the legacy stream: ordered after the flush's memset
    runtime::Event start = runtime::Event::create(ctx_), stop = runtime::Event::create(ctx_);
    std::vector<bool> ok(kernels.size(), true);
    for (size_t i = 0; i < kernels.size(); ++i) {
      try {
        kernels[i]->launch(ctx_, nullptr, ptrs_, scalars_, dims_);
        s.synchronize();
      } catch (const ir::Error& e) {
        ok[i] = false;
        out[i].error = e.what();
      }
    }
    for (int rep = 0; rep < reps; ++rep)
      for (size_t j = 0; j < kernels.size(); ++j) {
        size_t i = (j + size_t(rep)) % kernels.size();
        if (!ok[i]) continue;
        flush_.fill(uint8_t(rep & 0xff));
        start.record(s);
        kernels[i]->launch(ctx_, nullptr, ptrs_, scalars_, dims_);
        stop.record(s);
        samples[i].push_back(1e3 * runtime::Event::elapsedMs(start, stop));
      }
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (!ok[i] || samples[i].empty()) continue;
      std::sort(samples[i].begin(), samples[i].end());
      out[i].microseconds = samples[i][samples[i].size() / 2];
    }
    return out;
  }

  std::string verify(const Kernel& kernel, std::string& how) override {
    ir::DiagnosticEngine diag;
    if (!expected_) {
      expected_ = referenceFor(program_, args_, dims_, seed_, diag);
      if (!expected_) return kNoReference + diag.str();
    }
    how = expected_->how;
    for (size_t i = 0; i < outputs_.size(); ++i)
      if (!outputs_[i].empty()) buffers_[i].fill(0x7f);  // poison: NaN in every float format Kiln writes
    try {
      kernel.launch(ctx_, nullptr, ptrs_, scalars_, dims_);
      ctx_.synchronize();
    } catch (const ir::Error& e) {
      return e.what();
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (outputs_[i].empty()) continue;
      interp::HostTensor got = args_.tensors.at(outputs_[i]);
      buffers_[i].copyToHost(got.bytes.data(), got.bytes.size());
      std::string line;
      if (!interp::outputMatches(outputs_[i], interp::toDoubles(got), expected_->values.at(outputs_[i]), line))
        return line;
    }
    return "";
  }

 private:
  runtime::Context ctx_;
  const ir::Operation& program_;
  std::map<std::string, int64_t> dims_;
  uint64_t seed_;
  interp::GeneratedArguments args_;
  runtime::DeviceBuffer flush_;
  std::vector<runtime::DeviceBuffer> buffers_;
  std::vector<uint64_t> ptrs_;
  std::vector<double> scalars_;
  std::vector<std::string> outputs_;  // the output's name at its argument's index, "" for an input
  std::optional<interp::ExpectedOutputs> expected_;
};

}  // namespace

std::optional<interp::ExpectedOutputs> referenceFor(const ir::Operation& program,
                                                    const interp::GeneratedArguments& args,
                                                    const std::map<std::string, int64_t>& dims, uint64_t seed,
                                                    ir::DiagnosticEngine& diag) {
  // The arguments already live on the host (they were uploaded), so the interpreter's limit, which
  // guards `kiln run --interpret` against allocating too much, is raised to what a check of them
  // needs: a copy with the doubles it keeps per element (at most 8 per byte of a 1-byte element,
  // plus the copy itself).
  size_t bytes = 0;
  for (const auto& [name, t] : args.tensors) bytes += t.bytes.size();
  const int64_t limit = std::max<int64_t>(interp::kDefaultMaxMemoryBytes, int64_t(bytes) * 10);
  // A tile's work: the product of the dims (a GEMM's multiply-adds) over the tiles there are. The
  // tiles checked do at most kVerifyTiles tiles of kVerifyTileWork's work.
  size_t tiles = kVerifyTiles;
  double work = 1;
  for (const auto& [d, v] : dims) work *= double(v);
  if (auto all = interp::sampleTiles(program, dims, 1, seed); all && all->instances > 0) {
    const double perTile = work / double(all->instances);
    tiles = std::clamp<size_t>(size_t(double(kVerifyTiles) * kVerifyTileWork / perTile), kMinVerifyTiles, kVerifyTiles);
  }
  return interp::expectedOutputs(program, args, dims, "auto", seed, diag, limit, tiles);
}

std::unique_ptr<Measurer> gpuMeasurer(const runtime::Context& ctx, const ir::Operation& program,
                                      const std::map<std::string, int64_t>& dims, uint64_t seed,
                                      ir::DiagnosticEngine& diag) {
  try {
    return std::make_unique<GpuMeasurer>(ctx, program, dims, seed);
  } catch (const ir::Error& e) {
    diag.error({}) << "kiln tune: " << e.what();
  } catch (const std::exception& e) {
    diag.error({}) << "kiln tune: the inputs could not be prepared: " << e.what();
  }
  return nullptr;
}

}  // namespace kiln::tuning
