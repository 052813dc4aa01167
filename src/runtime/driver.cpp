#include "kiln/runtime/driver.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

#include "kiln/ir/diagnostics.h"

namespace kiln::runtime {

namespace {

constexpr const char* kNoGpuAdvice =
    "Kiln can still compile, inspect and interpret programs: try `kiln run --interpret`";

// One row of KILN_CU_ENTRY_POINTS, with the address of the member it fills.
struct EntryPoint {
  const char* symbol;    // base name, as cuGetProcAddress wants it
  int version;           // ABI version of the typedef we call it through
  const char* exported;  // name for dlsym when cuGetProcAddress is missing
  bool required;
  void** slot;
};

bool fail(std::string* whyNot, std::string message) {
  if (whyNot) *whyNot = std::move(message);
  return false;
}

}  // namespace

std::string versionString(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::string Driver::defaultLibraryPath() {
  const char* env = std::getenv("KILN_LIBCUDA");
  return env && *env ? std::string(env) : std::string("libcuda.so.1");
}

Driver::~Driver() {
  if (handle_) dlclose(handle_);
}

std::unique_ptr<Driver> Driver::load(const std::string& path, std::string* whyNot) {
  // RTLD_LOCAL keeps the driver's symbols out of the global namespace, so nothing else in the
  // process can bind to them by accident and appear to "work without libcuda".
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    fail(whyNot, fmt::format("no NVIDIA driver found ({} could not be loaded: {}); {}", path,
                             err ? err : "unknown error", kNoGpuAdvice));
    return nullptr;
  }
  std::unique_ptr<Driver> d(new Driver());
  d->handle_ = handle;
  d->path_ = path;

  const EntryPoint table[] = {
#define KILN_CU_ROW(member, sym, ver, exported, required) \
  {#sym, ver, exported, required, reinterpret_cast<void**>(&d->member)},
      KILN_CU_ENTRY_POINTS(KILN_CU_ROW)
#undef KILN_CU_ROW
  };

  auto unusable = [&](const std::string& why) {
    fail(whyNot, fmt::format("the NVIDIA driver {} is unusable ({}); {}", path, why, kNoGpuAdvice));
    return nullptr;
  };

  // cuGetProcAddress_v2 (CUDA 12.0) reports why a symbol is missing; the 11.3 form does not.
  auto procV2 = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(handle, "cuGetProcAddress_v2"));
  auto procV1 = reinterpret_cast<PFN_cuGetProcAddress_v11030>(dlsym(handle, "cuGetProcAddress"));
  d->usedProcAddress_ = procV2 || procV1;
  // Per-thread default-stream variants would change what stream 0 means; Kiln always asks for
  // the legacy ones, which is also what the dlsym fallback finds.
  const cuuint64_t flags = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  auto resolve = [&](const EntryPoint& e) -> void* {
    void* fn = nullptr;
    if (procV2) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
      if (procV2(e.symbol, &fn, e.version, flags, &status) != CUDA_SUCCESS) return nullptr;
      return status == CU_GET_PROC_ADDRESS_SUCCESS ? fn : nullptr;
    }
    if (procV1) return procV1(e.symbol, &fn, e.version, flags) == CUDA_SUCCESS ? fn : nullptr;
    return dlsym(handle, e.exported);
  };

  // The version comes first: asking cuGetProcAddress for an ABI newer than the driver is an error,
  // and the messages below name the driver's version.
  for (const EntryPoint& e : table) {
    if (std::string_view(e.symbol) != "cuDriverGetVersion") continue;
    *e.slot = resolve(e);
  }
  if (!d->driverGetVersion) return unusable("it does not provide cuDriverGetVersion");
  if (d->driverGetVersion(&d->version_) != CUDA_SUCCESS)
    return unusable("cuDriverGetVersion failed");

  for (const EntryPoint& e : table) {
    if (e.version <= d->version_) *e.slot = resolve(e);
    if (*e.slot || !e.required) continue;
    return unusable(
        fmt::format("it does not provide {}, which needs CUDA {}; the driver is CUDA {}", e.symbol,
                    versionString(e.version), versionString(d->version_)));
  }

  CUresult r = d->init(0);
  if (r != CUDA_SUCCESS) {
    fail(whyNot, fmt::format("no usable NVIDIA GPU (cuInit failed: {}); {}", d->errorText(r),
                             kNoGpuAdvice));
    return nullptr;
  }
  int count = 0;
  r = d->deviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    fail(whyNot, fmt::format("no NVIDIA GPU found (the driver {} reports {}); {}", path,
                             r != CUDA_SUCCESS ? "an error: " + d->errorText(r) : "no devices",
                             kNoGpuAdvice));
    return nullptr;
  }
  return d;
}

Driver* Driver::get(std::string* whyNot) {
  static std::once_flag once;
  static Driver* driver = nullptr;  // leaked on purpose: see the header
  static std::string reason;
  std::call_once(once, [] { driver = load(defaultLibraryPath(), &reason).release(); });
  if (!driver && whyNot) *whyNot = reason;
  return driver;
}

std::string Driver::errorText(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (getErrorName) getErrorName(result, &name);
  if (getErrorString) getErrorString(result, &text);
  std::string s = name ? name : fmt::format("CUDA error {}", static_cast<int>(result));
  if (text) s += fmt::format(" ({})", text);
  return s;
}

void Driver::checkCu(CUresult result, std::string_view what) const {
  if (result == CUDA_SUCCESS) return;
  throw ir::Error(ir::Location::unknown(), fmt::format("{} failed: {}", what, errorText(result)));
}

}  // namespace kiln::runtime
