// AscendC on the CPU, part 5: what a launch runs. The rewritten kernel<<<...>>>(...)
// binds the kernel to its arguments and calls cohortKernelLaunch; a fatbin module
// lists its kernels with an entry that unpacks an argument array.
#ifndef COHORT_ASCENDC_KERNEL_LAUNCH_H_
#define COHORT_ASCENDC_KERNEL_LAUNCH_H_

#include "kernel_core.h"

// ---- Launching (the code ascendc.cmake's rewrite of kernel<<<...>>>(...) calls) --------
namespace cohort_ascendc {

template <typename F>
struct FunctionArity;
template <typename... P>
struct FunctionArity<void (*)(P...)> {
  static constexpr std::index_sequence_for<P...> sequence() { return {}; }
};

/// Converts an argument as the device's launch stub does: a global-memory pointer
/// of any type (the stub takes void*) or a value converted to the parameter's type.
template <typename P, typename A>
P convertArgument(A&& a) {
  using D = std::decay_t<A>;
  if constexpr (std::is_pointer<P>::value && std::is_pointer<D>::value) {
    return reinterpret_cast<P>(const_cast<void*>(static_cast<const volatile void*>(a)));
  } else if constexpr (std::is_pointer<P>::value && std::is_null_pointer<D>::value) {
    return nullptr;
  } else {
    return static_cast<P>(std::forward<A>(a));
  }
}

/// Runs one block of `run` with the block's identity and UB set up; a trap or an
/// exception becomes the block's failure.
template <typename Run>
int runBlock(CohortKernelBlock* block, const char* kernel, Run&& run) {
  auto& s = AscendC::cohort_detail::tState;
  s.block = block;
  s.kernel = kernel;
  s.ubBytes = block->ubBytes;
  s.ub = AscendC::cohort_detail::unifiedBuffer(block->ubBytes);
  s.ubUsed = 0;
  block_idx = block->blockIdx;
  block_num = block->blockNum;
  try {
    run();
    return 0;
  } catch (const AscendC::cohort_detail::Trap&) {
    return 1;
  } catch (const std::exception& e) {
    std::snprintf(block->error, block->errorCapacity, "the kernel threw: %s", e.what());
    return 1;
  } catch (...) {
    std::snprintf(block->error, block->errorCapacity, "the kernel threw");
    return 1;
  }
}

template <typename... P>
struct BoundKernel {
  void (*kernel)(P...);
  const char* name;
  std::tuple<P...> args;

  static int run(void* self, CohortKernelBlock* block) {
    auto* k = static_cast<BoundKernel*>(self);
    return runBlock(block, k->name, [k] { std::apply(k->kernel, k->args); });
  }
  static void release(void* self) { delete static_cast<BoundKernel*>(self); }
};

/// `kernel<<<blockDim, l2ctrl, stream>>>(args...)` becomes
/// `Launch(kernel, "kernel", blockDim, l2ctrl, stream)(args...)`: queues the kernel
/// with its arguments bound by value and returns the aclError of the launch.
template <typename... P>
class Launcher {
 public:
  Launcher(void (*kernel)(P...), const char* name, uint32_t blockDim, void* l2ctrl, void* stream)
      : kernel_(kernel), name_(name), blockDim_(blockDim), l2ctrl_(l2ctrl), stream_(stream) {}

  template <typename... A>
  uint32_t operator()(A&&... a) const {
    static_assert(sizeof...(A) == sizeof...(P), "the launch passes a different number of "
                                                "arguments than the kernel has parameters");
    auto* bound = new BoundKernel<P...>{
        kernel_, name_, std::tuple<P...>(convertArgument<P>(std::forward<A>(a))...)};
    return cohortKernelLaunch(name_, blockDim_, l2ctrl_, stream_, &BoundKernel<P...>::run, bound,
                              &BoundKernel<P...>::release);
  }

 private:
  void (*kernel_)(P...);
  const char* name_;
  uint32_t blockDim_;
  void* l2ctrl_;
  void* stream_;
};

template <typename... P, typename L, typename S>
Launcher<P...> Launch(void (*kernel)(P...), const char* name, uint32_t blockDim, L l2ctrl,
                      S stream) {
  return Launcher<P...>(kernel, name, blockDim, convertArgument<void*>(l2ctrl),
                        convertArgument<void*>(stream));
}

// ---- Fatbin modules: a table of the module's kernels (ascendc_fatbin_library) ----------
/// Runs one block of `Kernel` on packed parameters (params[i] points at parameter i).
template <auto Kernel, typename... P, size_t... I>
int runPackedAt(void (*)(P...), void* const* params, CohortKernelBlock* block,
                std::index_sequence<I...>) {
  return runBlock(block, "", [params] {
    Kernel(*static_cast<std::remove_reference_t<P>*>(params[I])...);
  });
}
template <auto Kernel>
int runPacked(void* const* params, CohortKernelBlock* block) {
  return runPackedAt<Kernel>(Kernel, params, block, FunctionArity<decltype(Kernel)>::sequence());
}

template <typename... P>
CohortKernelEntry makeEntry(const char* name, void (*)(P...),
                            int (*run)(void* const*, CohortKernelBlock*)) {
  static const uint32_t sizes[sizeof...(P) + 1] = {static_cast<uint32_t>(sizeof(P))..., 0};
  return CohortKernelEntry{name, static_cast<uint32_t>(sizeof...(P)), sizes, run};
}

/// The kernels of this module (a fatbin module is built with hidden visibility, so
/// each module has its own list).
inline std::vector<CohortKernelEntry>& moduleKernels() {
  static std::vector<CohortKernelEntry> kernels;
  return kernels;
}
struct RegisterKernel {
  explicit RegisterKernel(const CohortKernelEntry& entry) { moduleKernels().push_back(entry); }
};

}  // namespace cohort_ascendc

#endif  // COHORT_ASCENDC_KERNEL_LAUNCH_H_
