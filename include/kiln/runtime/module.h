#pragma once
// Loaded device code: a Module holds one cubin (or PTX, which the driver JIT-compiles) and unloads
// it when destroyed; a Function is one kernel in it.
//
// A kernel may use at most 48 KB of dynamic shared memory unless the host raises
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first (up to the device's opt-in limit, 227 KB on
// sm_90). Module::function does that when asked for more, so a launch never fails for it.
#include <string>
#include <string_view>

#include "kiln/runtime/device.h"

namespace kiln::runtime {

// What the driver says about a loaded kernel (cuFuncGetAttribute).
struct FunctionAttributes {
  int numRegs = 0;
  int localBytes = 0;  // per thread: stack frame and spills
  int staticSharedBytes = 0;
  int constBytes = 0;
  int maxThreadsPerBlock = 0;  // may be below 1024 when the kernel uses many registers
  int maxDynamicSharedBytes = 0;
  int ptxVersion = 0;     // e.g. 80 for PTX ISA 8.0 (the virtual arch for JIT'ed code)
  int binaryVersion = 0;  // e.g. 90 for sm_90
};

class Function {
 public:
  const std::string& name() const { return name_; }
  CUfunction handle() const { return fn_; }
  const Context& context() const { return ctx_; }
  // As read when the function was looked up, and updated by reserveDynamicShared.
  const FunctionAttributes& attributes() const { return attrs_; }

  // Lets launches of this kernel use up to `bytes` of dynamic shared memory. Raises the attribute
  // only when needed (above the current limit). Throws kiln::ir::Error when static plus dynamic
  // shared memory exceeds what the device allows a block.
  void reserveDynamicShared(int bytes);

 private:
  friend class Module;
  Function(const Context& ctx, CUfunction fn, std::string name);
  Context ctx_;
  CUfunction fn_;
  std::string name_;
  FunctionAttributes attrs_;
};

class Module {
 public:
  // Loads `image`: a cubin or fatbin (ELF / fatbin bytes) or PTX text. `label` names it in
  // errors (the kernel or file name). A load failure throws kiln::ir::Error with the driver's
  // message and JIT log.
  static Module load(const Context& ctx, std::string_view image, std::string label);

  Module(Module&& o) noexcept;
  Module& operator=(Module&& o) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();

  // Looks up kernel `name` (its .entry name) and reserves `dynamicSharedBytes` for it. The
  // Function is valid while this Module lives. Throws when there is no such kernel.
  Function function(const std::string& name, int dynamicSharedBytes = 0) const;

  CUmodule handle() const { return mod_; }
  const std::string& label() const { return label_; }

 private:
  Module(const Context& ctx, CUmodule m, std::string label)
      : ctx_(ctx), mod_(m), label_(std::move(label)) {}
  void reset();
  Context ctx_;
  CUmodule mod_;
  std::string label_;
};

// True when `image` is PTX text rather than an ELF cubin or a fatbin (decided by magic numbers).
bool isPtxImage(std::string_view image);

}  // namespace kiln::runtime
