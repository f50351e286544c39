// Host wrappers of the AscendC kernels in test_kernels.cpp: each launches one
// kernel with <<<>>> (rewritten by ascendc.cmake) and returns the launch's aclError.
#pragma once

#include <cstdint>

// z = x + y through the UB in tiles of `tile` elements, double-buffered queues.
uint32_t LaunchAddFloat(uint32_t blockDim, void* stream, float* x, float* y, float* z,
                        uint32_t perBlock, uint32_t tile);
uint32_t LaunchAddHalf(uint32_t blockDim, void* stream, void* x, void* y, void* z,
                       uint32_t perBlock, uint32_t tile);
// For every element i of a block's slice: out[k][i] = op_k(x[i], y[i]) for the 16
// vector operations in test_kernels.cpp's order (see kVectorOps in ascendc_test.cc).
uint32_t LaunchVectorOps(uint32_t blockDim, void* stream, float* x, float* y, float* out,
                         uint32_t perBlock);
// sums[b] = sum of block b's slice, maxes[b] = its maximum, indexes[b] = its index.
uint32_t LaunchReduce(uint32_t blockDim, void* stream, float* x, float* sums, float* maxes,
                      uint32_t* indexes, uint32_t perBlock);
// out[b] = b * 1000 + blockNum, written by a scalar store per block.
uint32_t LaunchBlockIds(uint32_t blockDim, void* stream, int32_t* out);
// Counts blocks running at once: *peak = the most seen together.
uint32_t LaunchConcurrency(uint32_t blockDim, void* stream, int32_t* running, int32_t* peak);
// Traps in block `which` (asm("trap") or AscendC::trap()).
uint32_t LaunchTrap(uint32_t blockDim, void* stream, uint32_t which, int32_t* done, bool viaAsm);
// Block `which` stores through `bad` (an address nothing maps); every other block adds 1
// to *done.
uint32_t LaunchFault(uint32_t blockDim, void* stream, uint32_t which, int32_t* bad, int32_t* done);
// Asks the UB for `bytes` in one queue.
uint32_t LaunchUbHungry(uint32_t blockDim, void* stream, uint32_t bytes);
// DeQue on an empty queue, or a copy larger than its local tensor (mode 0 / 1).
uint32_t LaunchMisuse(uint32_t blockDim, void* stream, float* x, uint32_t mode);
// Prints "block <i> of <n>" from each block.
uint32_t LaunchPrint(uint32_t blockDim, void* stream);
// out[i] = (int32) (x[i] * scale) with DataCopyPad over an odd length, Cast and Duplicate.
uint32_t LaunchPadCast(uint32_t blockDim, void* stream, float* x, int32_t* out, uint32_t length,
                       float scale);
