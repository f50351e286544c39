// The AscendC kernel language on the CPU: the vector subset that CANN's kernel
// samples use, written by Cohort from the documented API. A kernel source compiles
// with the host compiler; each block runs on a thread of the device's AI Core pool
// (runtime/core_pool.h) with a bounded local buffer standing for the core's unified
// buffer (UB). Everything the hardware would corrupt silently -- an operand larger
// than its tensor, a UB overrun, an empty queue -- traps instead: the block stops
// and the stream reports an AI Core exception naming the kernel, block and cause.
//
// Thread-safety: a block's state (block_idx, the UB) is per thread; blocks share
// only global memory, as on the device. Nothing here outlives a kernel launch.
#ifndef COHORT_ASCENDC_KERNEL_OPERATOR_H_
#define COHORT_ASCENDC_KERNEL_OPERATOR_H_

#include "kernel_core.h"
#include "kernel_data_copy.h"
#include "kernel_launch.h"
#include "kernel_tensor.h"
#include "kernel_vector.h"

// Inline assembly of the device (asm("trap")) has no CPU meaning: a trap traps, any
// other instruction is refused at run time with its text.
namespace AscendC::cohort_detail {
inline void inlineAssembly(const char* text) {
  if (std::strstr(text, "trap") != nullptr) trap("the kernel executed asm(\"trap\")");
  trap("inline assembly %s does not run on an emulated AI Core", text);
}
}  // namespace AscendC::cohort_detail
#define asm(...) ::AscendC::cohort_detail::inlineAssembly(#__VA_ARGS__)

// What ascendc.cmake appends to a fatbin module's sources: one registration per
// kernel, and (once per module) the table the runtime reads.
#define COHORT_ASCENDC_REGISTER(name)                                               \
  static ::cohort_ascendc::RegisterKernel cohort_ascendc_register_##name(           \
      ::cohort_ascendc::makeEntry(#name, &name, &::cohort_ascendc::runPacked<&name>));
#define COHORT_ASCENDC_KERNEL_TABLE()                                                    \
  extern "C" __attribute__((visibility("default"))) const CohortKernelEntry*            \
  cohort_ascendc_kernel_table(uint32_t* count) {                                        \
    *count = static_cast<uint32_t>(::cohort_ascendc::moduleKernels().size());           \
    return ::cohort_ascendc::moduleKernels().data();                                    \
  }

#endif  // COHORT_ASCENDC_KERNEL_OPERATOR_H_
