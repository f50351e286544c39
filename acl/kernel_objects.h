// The objects behind the kernel handles of the binary path (kernel_launch_api.cc,
// kernel_args_api.cc): loaded modules, their functions and argument lists, each in a
// table of live handles. Thread-safe through the tables; an object lives while a
// handle or a queued launch holds it.
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "acl/entry_names.h"
#include "ascendc/cohort_kernel_abi.h"

namespace cohort::acl::kernels {

inline constexpr std::size_t kErrorCapacity = 512;

// A loaded module. Launches hold it, so a module unloaded while a launch is queued
// is closed after that launch.
struct Binary {
  ~Binary() {
    if (library != nullptr) dlclose(library);
    if (memfd >= 0) close(memfd);
  }
  void* library = nullptr;
  int memfd = -1;  // the image of aclrtBinaryLoadFromData
  std::string origin;
  std::vector<CohortKernelEntry> kernels;
};

struct Function {
  std::shared_ptr<Binary> binary;
  CohortKernelEntry entry{};
};

// An argument list being built for one function.
struct Args {
  struct Param {
    std::vector<unsigned char> value;  // the bytes of the parameter
    bool placeholder = false;
    std::vector<unsigned char> data;   // a placeholder's host buffer
  };
  std::shared_ptr<Function> function;
  std::deque<Param> params;  // a deque: handles (addresses) stay valid as it grows
  bool finalized = false;
};

// aclrtKernelArgsInitByUserMem: the caller's memory for the handle (this much) and for
// the arguments (their bytes, then a pointer's worth per parameter for placeholders).
inline constexpr size_t kArgsHandleBytes = 64;
inline size_t argsMemBytes(const Function& f, size_t userArgsSize) {
  return userArgsSize + f.entry.paramCount * sizeof(void*);
}

inline HandleTable<Binary>& binaries() {
  static auto* table = new HandleTable<Binary>();
  return *table;
}
inline HandleTable<Function>& functions() {
  static auto* table = new HandleTable<Function>();
  return *table;
}
inline HandleTable<Args>& argLists() {
  static auto* table = new HandleTable<Args>();
  return *table;
}

// The live objects behind an entry point's funcHandle and argsHandle arguments.
inline Status findFunction(const char* fn, void* handle, std::shared_ptr<Function>* f) {
  return functions().lookup(fn, "funcHandle", handle, "function", f);
}
inline Status findArgs(const char* fn, void* handle, std::shared_ptr<Args>* args) {
  return argLists().lookup(fn, "argsHandle", handle, "argument list", args);
}

}  // namespace cohort::acl::kernels
