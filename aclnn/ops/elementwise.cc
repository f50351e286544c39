// aclnn's element-wise operators (libopapi.so) over the base's binaryOp and run.
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnn/meta.h"
#include "common/error.h"

using cohort::ErrorCode;
using cohort::makeError;
namespace nn = cohort::aclnn;

extern "C" {

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor* self, const aclTensor* other,
                                     const aclScalar* alpha, aclTensor* out,
                                     uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* fn = "aclnnAddGetWorkspaceSize";
  if (alpha == nullptr) {
    return nn::fail(fn, ACLNN_ERR_PARAM_NULLPTR,
                    makeError(ErrorCode::kInvalidArgument, "alpha is null"));
  }
  const double a = alpha->real;
  const int64_t ai = alpha->integer;
  return nn::binaryOp(fn, self, other, out,
                      {[a](double x, double y) { return x + a * y; },
                       [ai](int64_t x, int64_t y) { return x + ai * y; }},
                      workspaceSize, executor);
}

aclnnStatus aclnnAdd(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                     aclrtStream stream) {
  return nn::run("aclnnAdd", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor* self, const aclTensor* other,
                                     aclTensor* out, uint64_t* workspaceSize,
                                     aclOpExecutor** executor) {
  return nn::binaryOp("aclnnMulGetWorkspaceSize", self, other, out,
                      {[](double x, double y) { return x * y; },
                       [](int64_t x, int64_t y) { return x * y; }},
                      workspaceSize, executor);
}

aclnnStatus aclnnMul(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                     aclrtStream stream) {
  return nn::run("aclnnMul", workspace, workspaceSize, executor, stream);
}

}  // extern "C"
