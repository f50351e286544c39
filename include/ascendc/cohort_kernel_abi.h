/* The C interface between AscendC kernels compiled for the CPU (kernel_operator.h)
 * and Cohort's runtime (libascendcl.so). Kernel code never calls it directly: the
 * launches that ascendc.cmake rewrites (`kernel<<<blockDim, l2ctrl, stream>>>(args)`)
 * and the fatbin entry tables do. A C interface, so that kernels built with either
 * libstdc++ ABI (-D_GLIBCXX_USE_CXX11_ABI=0 is common in CANN programs) link. */
#ifndef COHORT_ASCENDC_KERNEL_ABI_H_
#define COHORT_ASCENDC_KERNEL_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the runtime tells one block of a kernel. */
typedef struct CohortKernelBlock {
  uint32_t blockIdx;
  uint32_t blockNum;
  uint64_t ubBytes;     /* the core's local (unified) buffer */
  char* error;          /* where a failing block says why (NUL-terminated) */
  size_t errorCapacity;
} CohortKernelBlock;

/* Runs one block of a kernel on `args`: 0 when it finished, otherwise non-zero with
 * the fault written into block->error (the AI Core exception the runtime reports). */
typedef int (*CohortKernelBlockFn)(void* args, CohortKernelBlock* block);
typedef void (*CohortKernelRelease)(void* args);

/* Queues `blockDim` blocks of `kernel` (its name, for errors) on `stream` (an
 * aclrtStream; null: the default stream): `run(args, block)` for each block, on the
 * device's AI Cores, in stream order. `release(args)` is called once no launch can
 * use `args` any more, also when the launch is refused. Returns an aclError. */
__attribute__((visibility("default"))) uint32_t cohortKernelLaunch(
    const char* kernel, uint32_t blockDim, void* l2ctrl, void* stream, CohortKernelBlockFn run,
    void* args, CohortKernelRelease release);

/* One kernel of a fatbin module: its name, its parameters' sizes, and how to run a
 * block on an argument array (one pointer per parameter, to the parameter's value). */
typedef struct CohortKernelEntry {
  const char* name;
  uint32_t paramCount;
  const uint32_t* paramSizes;
  int (*runPacked)(void* const* params, CohortKernelBlock* block);
} CohortKernelEntry;

/* Exported by every fatbin module (ascendc_fatbin_library): its kernels. */
typedef const CohortKernelEntry* (*CohortKernelTableFn)(uint32_t* count);
#define COHORT_KERNEL_TABLE_SYMBOL "cohort_ascendc_kernel_table"

#ifdef __cplusplus
}
#endif

#endif /* COHORT_ASCENDC_KERNEL_ABI_H_ */
