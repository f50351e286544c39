// How torch tensors and reduce ops become Cohort buffers, types and ops, and the
// checks that refuse a call before anything is sent. Pure functions of their
// arguments: thread-safe, no state.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "cohort/communicator.h"

namespace cohort::torch_cohort {

/// A tensor as Cohort sees it: `count` elements of `type` at `data`. Complex
/// tensors are pairs of their real type (as torch's other backends view them);
/// bool is uint8 (its reductions are remapped by reduceOpFor).
struct Buffer {
  void* data = nullptr;
  std::size_t count = 0;
  DataType type = DataType::kUint8;
};

/// Throws c10::Error (RuntimeError in Python) naming `op` and the problem unless `t`
/// is a dense, contiguous CPU tensor of a type Cohort can carry.
void checkTensor(const at::Tensor& t, const char* op, const char* role);
/// checkTensor, and the same dtype and number of elements as `like`.
void checkLike(const at::Tensor& t, const at::Tensor& like, const char* op, const char* role);
/// checkTensor, and the same dtype as `like` (any size).
void checkSameType(const at::Tensor& t, const at::Tensor& like, const char* op, const char* role);
/// Exactly one tensor in a list the API passes as a vector (one tensor per process).
const at::Tensor& single(const std::vector<at::Tensor>& tensors, const char* op);

Buffer bufferOf(const at::Tensor& t);
/// The Cohort op for `op` on tensors of `dtype`: bool SUM/MAX are logical or (uint8
/// max), PRODUCT/MIN logical and (uint8 min); complex takes SUM and AVG only; AVG
/// needs a floating type. Throws for ops Cohort does not have (BAND, BOR, BXOR,
/// PREMUL_SUM), naming them.
ReduceOp reduceOpFor(const c10d::ReduceOp& op, at::ScalarType dtype, const char* opName);

}  // namespace cohort::torch_cohort
