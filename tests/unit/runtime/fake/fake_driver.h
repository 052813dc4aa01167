#pragma once
// Test fixture support: loads the fake libcuda (fake_libcuda.h) as a Driver, with fresh state.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "kiln/runtime/driver.h"
#include "tests/unit/runtime/fake/fake_libcuda.h"

namespace kiln::runtime::testing {

class FakeDriver {
 public:
  // `setup` adjusts the knobs before the driver is loaded (cuInit runs during the load).
  explicit FakeDriver(std::function<void(FakeCudaState&)> setup = {},
                      const char* path = KILN_FAKE_LIBCUDA)
      : path_(path) {
    // Our own handle keeps the library (and its state) loaded for the fixture's whole life.
    handle_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {  // a broken build, not a test outcome
      std::fprintf(stderr, "cannot load the fake libcuda %s: %s\n", path, dlerror());
      std::abort();
    }
    auto get = reinterpret_cast<FakeCudaState* (*)()>(dlsym(handle_, "kilnFakeCudaState"));
    state_ = get();
    *state_ = FakeCudaState{};
    if (setup) setup(*state_);
    driver_ = Driver::load(path, &whyNot_);
  }
  ~FakeDriver() {
    driver_.reset();
    if (handle_) dlclose(handle_);
  }
  FakeDriver(const FakeDriver&) = delete;
  FakeDriver& operator=(const FakeDriver&) = delete;

  FakeCudaState& state() { return *state_; }
  // The loaded driver; fails the test when the load failed.
  const Driver& driver() {
    if (!driver_) ADD_FAILURE() << "fake driver did not load: " << whyNot_;
    return *driver_;
  }
  Driver* get() { return driver_.get(); }
  const std::string& whyNot() const { return whyNot_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* handle_ = nullptr;
  FakeCudaState* state_ = nullptr;
  std::unique_ptr<Driver> driver_;
  std::string whyNot_;
};

}  // namespace kiln::runtime::testing
