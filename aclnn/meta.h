// The objects behind aclnn's opaque handles, and the element-wise machinery its
// operators (aclnn/ops) share. Tensors, scalars and executors are plain values owned
// by their handle; an executor's kernel holds copies of what it reads, so a handle
// may be destroyed once its operator is queued.
#pragma once

#include <functional>
#include <vector>

#include "aclnn/acl_meta.h"
#include "cohort/runtime.h"

struct aclTensor {
  std::vector<int64_t> dims;     // the view's shape
  std::vector<int64_t> strides;  // in elements
  int64_t offset = 0;            // in elements
  aclDataType type = ACL_FLOAT;
  aclFormat format = ACL_FORMAT_ND;
  void* data = nullptr;
};

struct aclScalar {
  aclDataType type = ACL_FLOAT;
  double real = 0;      // the value, for floating-point arithmetic
  int64_t integer = 0;  // the value, for integer arithmetic
};

struct aclOpExecutor {
  const char* op = "";
  cohort::runtime::Kernel kernel;  // what the second phase queues
  bool repeatable = false;
};

namespace cohort::aclnn {

/// Records a failed call of `function` as the ACL layer does (aclGetRecentErrMsg),
/// and returns `code`.
aclnnStatus fail(const char* function, aclnnStatus code, const Status& status);

/// An element-wise operation of two operands: `real` when any operand or the output
/// is a floating-point type, `integer` otherwise.
struct BinaryFn {
  std::function<double(double, double)> real;
  std::function<int64_t(int64_t, int64_t)> integer;
};

/// The first phase of an element-wise operator: checks the tensors (types, the
/// broadcast of self and other equal to out's shape) and makes the executor whose
/// kernel computes out = fn(self, other) element by element. Needs no workspace.
aclnnStatus binaryOp(const char* function, const aclTensor* self, const aclTensor* other,
                     const aclTensor* out, BinaryFn fn, uint64_t* workspaceSize,
                     aclOpExecutor** executor);

/// The second phase of every operator: queues the executor's kernel on `stream`
/// (recorded, if the stream captures a model) and frees it unless repeatable.
aclnnStatus run(const char* function, void* workspace, uint64_t workspaceSize,
                aclOpExecutor* executor, aclrtStream stream);

}  // namespace cohort::aclnn
