#include "kiln/runtime/module.h"

#include <fmt/format.h>

#include <cstring>
#include <utility>
#include <vector>

#include "kiln/ir/diagnostics.h"

namespace kiln::runtime {

namespace {

// A hint for the load failures a user can do something about.
std::string loadHint(CUresult r, const Context& ctx) {
  const DeviceProperties& p = ctx.properties();
  switch (r) {
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return fmt::format(
          "; the driver (CUDA {}) is older than the PTX ISA version of this code: "
          "update the driver, or load a cubin built for sm_{}{}",
          versionString(ctx.driver().version()), p.ccMajor, p.ccMinor);
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
      return fmt::format(
          "; the image holds no code for this device ({}, sm_{}{}): compile for "
          "its architecture",
          p.name, p.ccMajor, p.ccMinor);
    default:
      return "";
  }
}

}  // namespace

bool isPtxImage(std::string_view image) {
  static constexpr unsigned char kElf[] = {0x7f, 'E', 'L', 'F'};
  static constexpr unsigned char kFatbin[] = {0x50, 0xed, 0x55, 0xba};  // 0xBA55ED50, little endian
  auto startsWith = [&](const unsigned char(&m)[4]) {
    return image.size() >= 4 && std::memcmp(image.data(), m, 4) == 0;
  };
  return !startsWith(kElf) && !startsWith(kFatbin);
}

Module Module::load(const Context& ctx, std::string_view image, std::string label) {
  ctx.makeCurrent();
  const bool ptx = isPtxImage(image);
  // The driver reads PTX up to a NUL and cannot be told its length, so PTX gets a terminated copy.
  std::string ptxCopy;
  const void* data = image.data();
  if (ptx) {
    ptxCopy.assign(image);
    data = ptxCopy.c_str();
  }
  std::vector<char> log(16 * 1024, '\0');
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(log.size() - 1))};
  CUmodule m = nullptr;
  CUresult r = ctx.driver().moduleLoadDataEx(&m, data, 2, opts, vals);
  if (r != CUDA_SUCCESS) {
    std::string jitLog(log.data());
    std::string msg =
        fmt::format("loading module '{}' ({}, {} bytes) failed: {}{}", label, ptx ? "PTX" : "cubin",
                    image.size(), ctx.driver().errorText(r), loadHint(r, ctx));
    if (!jitLog.empty()) msg += "\n" + jitLog;
    throw ir::Error(ir::Location::unknown(), msg);
  }
  return Module(ctx, m, std::move(label));
}

Module::Module(Module&& o) noexcept
    : ctx_(o.ctx_), mod_(std::exchange(o.mod_, nullptr)), label_(std::move(o.label_)) {}

Module& Module::operator=(Module&& o) noexcept {
  if (this != &o) {
    reset();
    ctx_ = o.ctx_;
    mod_ = std::exchange(o.mod_, nullptr);
    label_ = std::move(o.label_);
  }
  return *this;
}

Module::~Module() { reset(); }

void Module::reset() {
  if (mod_) {
    ctx_.driver().ctxSetCurrent(ctx_.handle());
    ctx_.driver().moduleUnload(mod_);  // errors ignored: destructors cannot report them
  }
  mod_ = nullptr;
}

Function Module::function(const std::string& name, int dynamicSharedBytes) const {
  ctx_.makeCurrent();
  CUfunction fn = nullptr;
  CUresult r = ctx_.driver().moduleGetFunction(&fn, mod_, name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND)
    throw ir::Error(ir::Location::unknown(),
                    fmt::format("module '{}' has no kernel named '{}'", label_, name));
  ctx_.driver().checkCu(r, fmt::format("cuModuleGetFunction('{}')", name));
  Function f(ctx_, fn, name);
  f.reserveDynamicShared(dynamicSharedBytes);
  return f;
}

Function::Function(const Context& ctx, CUfunction fn, std::string name)
    : ctx_(ctx), fn_(fn), name_(std::move(name)) {
  const Driver& d = ctx.driver();
  auto attr = [&](CUfunction_attribute a, const char* what) {
    int v = 0;
    d.checkCu(d.funcGetAttribute(&v, a, fn_),
              fmt::format("cuFuncGetAttribute({}) of '{}'", what, name_));
    return v;
  };
  attrs_.numRegs = attr(CU_FUNC_ATTRIBUTE_NUM_REGS, "registers");
  attrs_.localBytes = attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local bytes");
  attrs_.staticSharedBytes = attr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared bytes");
  attrs_.constBytes = attr(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, "constant bytes");
  attrs_.maxThreadsPerBlock =
      attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block");
  attrs_.maxDynamicSharedBytes =
      attr(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max dynamic shared bytes");
  attrs_.ptxVersion = attr(CU_FUNC_ATTRIBUTE_PTX_VERSION, "PTX version");
  attrs_.binaryVersion = attr(CU_FUNC_ATTRIBUTE_BINARY_VERSION, "binary version");
}

void Function::reserveDynamicShared(int bytes) {
  const DeviceProperties& p = ctx_.properties();
  if (bytes < 0)
    throw ir::Error(
        ir::Location::unknown(),
        fmt::format("kernel '{}': dynamic shared memory size {} is negative", name_, bytes));
  const int total = attrs_.staticSharedBytes + bytes;
  if (total > p.maxSharedPerBlockOptin)
    throw ir::Error(
        ir::Location::unknown(),
        fmt::format("kernel '{}' needs {} bytes of shared memory per block ({} static + "
                    "{} dynamic) but {} allows at most {}; use fewer pipeline stages or "
                    "smaller tiles",
                    name_, total, attrs_.staticSharedBytes, bytes, p.name,
                    p.maxSharedPerBlockOptin));
  if (bytes <= attrs_.maxDynamicSharedBytes) return;
  ctx_.makeCurrent();
  ctx_.driver().checkCu(
      ctx_.driver().funcSetAttribute(fn_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
      fmt::format("raising the dynamic shared memory limit of '{}' to {} bytes", name_, bytes));
  attrs_.maxDynamicSharedBytes = bytes;
}

}  // namespace kiln::runtime
