// AscendC kernels on the emulated devices: the launch that kernel<<<...>>>(...)
// becomes (cohortKernelLaunch, include/ascendc/cohort_kernel_abi.h), and the binary
// path of the fatbin programs: modules that ascendc_fatbin_library built as shared
// objects (aclrtBinaryLoadFromFile/FromData, aclrtBinaryGetFunction), argument lists
// (aclrtKernelArgs*, kernel_args_api.cc) and launches (aclrtLaunchKernel, aclrtLaunchKernelWithConfig).
// Each launch runs its blocks on the device's AI Cores (runtime::launchBlocks), at
// most as many at once as the resource limits allow; a block that traps fails the
// stream with ACL_ERROR_RT_VECTOR_CORE_EXCEPTION naming the kernel, the block and why.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/kernel_objects.h"
#include "ascendc/cohort_kernel_abi.h"
#include "common/config.h"

namespace {

using cohort::acl::vectorCoreLimit;
using cohort::acl::kernels::Args;
using cohort::acl::kernels::Binary;
using cohort::acl::kernels::Function;
using cohort::acl::kernels::binaries;
using cohort::acl::kernels::findArgs;
using cohort::acl::kernels::findFunction;
using cohort::acl::kernels::functions;
using cohort::acl::kernels::kErrorCapacity;

// Queues `run(args, block)` for each block; `args` lives as long as the launch can
// run (in a captured model, as long as the model).
Outcome launch(const char* function, const std::string& kernel, uint32_t blockDim,
               aclrtStream stream, CohortKernelBlockFn run, std::shared_ptr<void> args) {
  if (blockDim == 0) return invalidArgument(function, "blockDim is 0 (kernel {})", kernel);
  ACL_RETURN_IF_FAILED(needStream(function, stream));
  uint32_t cores = 0;
  COHORT_RETURN_IF_ERROR(withName(function, vectorCoreLimit(stream, &cores)));
  const uint64_t ubBytes = cohort::Config::global().ubBytes;
  auto body = [kernel, blockDim, ubBytes, run, args](uint32_t block) -> Status {
    char error[kErrorCapacity] = {};
    CohortKernelBlock info{block, blockDim, ubBytes, error, sizeof error};
    if (run(args.get(), &info) == 0) return Status::Ok();
    return cohort::makeError(ErrorCode::kKernelFault,
                             "AI Core exception in kernel {} block {} of {}: {}", kernel, block,
                             blockDim, error[0] != '\0' ? error : "the kernel failed");
  };
  return withName(function,
                  rt::launchBlocks(toStream(stream), blockDim, cores, std::move(body), kernel));
}

Outcome openModule(const char* function, const char* path, std::shared_ptr<Binary> binary,
                   aclrtBinHandle* handle) {
  binary->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (binary->library == nullptr) {
    const char* why = dlerror();
    return failure(ACL_ERROR_INVALID_FILE, ErrorCode::kParseError, function,
                   "{} is not a kernel module built by ascendc_fatbin_library: {}",
                   binary->origin, why != nullptr ? why : "dlopen failed");
  }
  auto table = reinterpret_cast<CohortKernelTableFn>(
      dlsym(binary->library, COHORT_KERNEL_TABLE_SYMBOL));
  if (table == nullptr) {
    return failure(ACL_ERROR_INVALID_FILE, ErrorCode::kParseError, function,
                   "{} has no kernel table ({}): build it with ascendc_fatbin_library",
                   binary->origin, COHORT_KERNEL_TABLE_SYMBOL);
  }
  uint32_t count = 0;
  const CohortKernelEntry* entries = table(&count);
  binary->kernels.assign(entries, entries + count);
  *handle = binaries().add(std::move(binary));
  return Status::Ok();
}

// Unpacks an argument blob laid out as the kernel's parameters in order, each at
// its natural alignment (up to 8 bytes): aclrtLaunchKernel's argsData.
Outcome unpackBlob(const char* function, const CohortKernelEntry& entry, const void* data,
                   size_t size, std::vector<unsigned char>* copy, std::vector<size_t>* offsets) {
  size_t at = 0;
  for (uint32_t i = 0; i < entry.paramCount; ++i) {
    const size_t p = entry.paramSizes[i];
    const size_t align = p >= 8 ? 8 : (p >= 4 ? 4 : (p >= 2 ? 2 : 1));
    at = (at + align - 1) / align * align;
    offsets->push_back(at);
    at += p;
  }
  if (size < at) {
    return invalidArgument(function, "argsSize {} is less than the {} bytes of {}'s {} parameters",
                           size, at, entry.name, entry.paramCount);
  }
  copy->assign(static_cast<const unsigned char*>(data),
               static_cast<const unsigned char*>(data) + at);
  return Status::Ok();
}

// A launch's own copy of its arguments (the host may change or free its list once
// the launch returns): the values and each placeholder's data, with the pointer
// array the kernel's entry reads.
struct PackedArgs {
  std::shared_ptr<Function> function;
  std::vector<std::vector<unsigned char>> values;
  std::vector<std::vector<unsigned char>> placeholders;
  std::vector<void*> pointers;
};

int runPacked(void* args, CohortKernelBlock* block) {
  auto* packed = static_cast<PackedArgs*>(args);
  return packed->function->entry.runPacked(packed->pointers.data(), block);
}

Outcome launchFunction(const char* function, std::shared_ptr<Function> f, uint32_t blockDim,
                       aclrtStream stream, const std::function<Outcome(PackedArgs*)>& fill) {
  auto packed = std::make_shared<PackedArgs>();
  packed->function = f;
  ACL_RETURN_IF_FAILED(fill(packed.get()));
  return launch(function, f->entry.name, blockDim, stream, &runPacked, packed);
}

}  // namespace

extern "C" uint32_t cohortKernelLaunch(const char* kernel, uint32_t blockDim, void* l2ctrl,
                                       void* stream, CohortKernelBlockFn run, void* args,
                                       CohortKernelRelease release) {
  (void)l2ctrl;  // the L2 cache control of the device: nothing to control here
  std::shared_ptr<void> owned(args, [release](void* a) {
    if (release != nullptr) release(a);
  });
  const std::string name = kernel != nullptr ? kernel : "kernel";
  const std::string fn = "kernel " + name + " <<<>>>";
  return apiCall(fn.c_str(), [&]() -> Outcome {
    if (run == nullptr) return nullArgument(fn.c_str(), "run");
    return launch(fn.c_str(), name, blockDim, stream, run, owned);
  });
}

aclError aclrtBinaryLoadFromFile(const char* binPath, aclrtBinaryLoadOptions* options,
                                 aclrtBinHandle* binHandle) {
  const char* fn = "aclrtBinaryLoadFromFile";
  return apiCall(fn, [&]() -> Outcome {
    (void)options;  // the load options concern the device's loader (lazy load, magic)
    if (binPath == nullptr) return nullArgument(fn, "binPath");
    if (binHandle == nullptr) return nullArgument(fn, "binHandle");
    if (access(binPath, R_OK) != 0) {
      return failure(ACL_ERROR_INVALID_FILE, ErrorCode::kInvalidArgument, fn,
                     "cannot read {}: {}", binPath, std::strerror(errno));
    }
    auto binary = std::make_shared<Binary>();
    binary->origin = binPath;
    return openModule(fn, binPath, std::move(binary), binHandle);
  });
}

aclError aclrtBinaryLoadFromData(const void* data, size_t length,
                                 const aclrtBinaryLoadOptions* options,
                                 aclrtBinHandle* binHandle) {
  const char* fn = "aclrtBinaryLoadFromData";
  return apiCall(fn, [&]() -> Outcome {
    (void)options;
    if (data == nullptr) return nullArgument(fn, "data");
    if (binHandle == nullptr) return nullArgument(fn, "binHandle");
    if (length == 0) return invalidArgument(fn, "length is 0");
    // dlopen reads files: the image goes into an anonymous one.
    auto binary = std::make_shared<Binary>();
    binary->origin = fmt::format("the {}-byte image at {}", length, data);
    binary->memfd = memfd_create("cohort-kernel-module", MFD_CLOEXEC);
    if (binary->memfd < 0) {
      return cohort::makeError(ErrorCode::kSystemError, "{}: memfd_create: {}", fn,
                               std::strerror(errno));
    }
    const auto* bytes = static_cast<const char*>(data);
    for (size_t done = 0; done < length;) {
      const ssize_t n = write(binary->memfd, bytes + done, length - done);
      if (n <= 0) {
        return cohort::makeError(ErrorCode::kSystemError, "{}: writing the image: {}", fn,
                                 std::strerror(errno));
      }
      done += static_cast<size_t>(n);
    }
    const std::string path = fmt::format("/proc/self/fd/{}", binary->memfd);
    return openModule(fn, path.c_str(), std::move(binary), binHandle);
  });
}

aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle) {
  const char* fn = "aclrtBinaryUnLoad";
  return apiCall(fn, [&]() -> Outcome {
    COHORT_RETURN_IF_ERROR(binaries().lookup(fn, "binHandle", binHandle, "kernel binary"));
    binaries().remove(binHandle);
    return Status::Ok();
  });
}

aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char* kernelName,
                                aclrtFuncHandle* funcHandle) {
  const char* fn = "aclrtBinaryGetFunction";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Binary> binary;
    COHORT_RETURN_IF_ERROR(
        binaries().lookup(fn, "binHandle", binHandle, "kernel binary", &binary));
    if (kernelName == nullptr) return nullArgument(fn, "kernelName");
    if (funcHandle == nullptr) return nullArgument(fn, "funcHandle");
    std::string names;
    for (const CohortKernelEntry& e : binary->kernels) {
      if (std::strcmp(e.name, kernelName) == 0) {
        auto f = std::make_shared<Function>();
        f->binary = binary;
        f->entry = e;
        *funcHandle = functions().add(std::move(f));
        return Status::Ok();
      }
      names += names.empty() ? e.name : std::string(", ") + e.name;
    }
    return failure(ACL_ERROR_RT_KERNEL_LOOKUP, ErrorCode::kInvalidArgument, fn,
                   "{} has no kernel {} (it has: {})", binary->origin, kernelName,
                   names.empty() ? "none" : names);
  });
}

aclError aclrtGetFunctionName(aclrtFuncHandle funcHandle, uint32_t maxLen, char* name) {
  const char* fn = "aclrtGetFunctionName";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Function> f;
    COHORT_RETURN_IF_ERROR(findFunction(fn, funcHandle, &f));
    if (name == nullptr) return nullArgument(fn, "name");
    if (std::strlen(f->entry.name) + 1 > maxLen) {
      return invalidArgument(fn, "maxLen {} cannot hold {} and its terminating NUL", maxLen,
                             f->entry.name);
    }
    std::strcpy(name, f->entry.name);
    return Status::Ok();
  });
}

aclError aclrtLaunchKernelWithConfig(aclrtFuncHandle funcHandle, uint32_t numBlocks,
                                     aclrtStream stream, aclrtLaunchKernelCfg* cfg,
                                     aclrtArgsHandle argsHandle, void* reserve) {
  const char* fn = "aclrtLaunchKernelWithConfig";
  return apiCall(fn, [&]() -> Outcome {
    (void)cfg;  // scheduling, dynamic UB, timeouts: attributes of the device's scheduler
    (void)reserve;
    std::shared_ptr<Args> args;
    COHORT_RETURN_IF_ERROR(
        findArgs(fn, argsHandle, &args));
    if (!args->finalized) {
      return invalidArgument(fn, "the argument list is not finalized (aclrtKernelArgsFinalize)");
    }
    std::shared_ptr<Function> f;
    COHORT_RETURN_IF_ERROR(findFunction(fn, funcHandle, &f));
    if (args->function->entry.runPacked != f->entry.runPacked) {
      return invalidArgument(fn, "the argument list was made for {}, not for {}",
                             args->function->entry.name, f->entry.name);
    }
    return launchFunction(fn, f, numBlocks, stream, [&](PackedArgs* packed) -> Outcome {
      for (const Args::Param& p : args->params) {
        if (p.placeholder) {
          packed->placeholders.push_back(p.data);
          void* address = packed->placeholders.back().data();
          std::vector<unsigned char> value(sizeof address);
          std::memcpy(value.data(), &address, sizeof address);
          packed->values.push_back(std::move(value));
        } else {
          packed->values.push_back(p.value);
        }
      }
      for (auto& v : packed->values) packed->pointers.push_back(v.data());
      return Status::Ok();
    });
  });
}

aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t numBlocks, const void* argsData,
                           size_t argsSize, aclrtStream stream) {
  const char* fn = "aclrtLaunchKernel";
  return apiCall(fn, [&]() -> Outcome {
    std::shared_ptr<Function> f;
    COHORT_RETURN_IF_ERROR(findFunction(fn, funcHandle, &f));
    return launchFunction(fn, f, numBlocks, stream, [&](PackedArgs* packed) -> Outcome {
      const CohortKernelEntry& e = packed->function->entry;
      if (argsData == nullptr && e.paramCount > 0) return nullArgument(fn, "argsData");
      std::vector<unsigned char> blob;
      std::vector<size_t> offsets;
      ACL_RETURN_IF_FAILED(unpackBlob(fn, e, argsData, argsSize, &blob, &offsets));
      packed->values.push_back(std::move(blob));
      for (size_t offset : offsets) packed->pointers.push_back(packed->values[0].data() + offset);
      return Status::Ok();
    });
  });
}
