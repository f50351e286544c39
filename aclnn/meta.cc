// aclnn's base (libnnopbase.so): tensors, scalars, executors, and the element-wise
// kernel over broadcast strided views that its operators share.
#include "aclnn/meta.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "acl/error_state.h"
#include "common/error.h"
#include "kernels/convert.h"

namespace cohort::aclnn {

aclnnStatus fail(const char* function, aclnnStatus code, const Status& status) {
  acl::noteFailure(function, static_cast<aclError>(code),
                   makeError(status.code(), "{}: {}", function, status.message()));
  return code;
}

namespace {

bool supported(aclDataType t) {
  switch (t) {
    case ACL_FLOAT: case ACL_FLOAT16: case ACL_BF16: case ACL_DOUBLE: case ACL_INT8:
    case ACL_INT16: case ACL_INT32: case ACL_INT64: case ACL_UINT8: case ACL_BOOL:
      return true;
    default:
      return false;
  }
}

bool isReal(aclDataType t) {
  return t == ACL_FLOAT || t == ACL_FLOAT16 || t == ACL_BF16 || t == ACL_DOUBLE;
}

std::size_t sizeOf(aclDataType t) {
  switch (t) {
    case ACL_DOUBLE: case ACL_INT64: return 8;
    case ACL_FLOAT: case ACL_INT32: return 4;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: return 2;
    default: return 1;
  }
}

template <typename T>
T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void store(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

double readReal(aclDataType t, const void* p) {
  switch (t) {
    case ACL_FLOAT: return load<float>(p);
    case ACL_FLOAT16: return kernels::halfToFloat(load<std::uint16_t>(p));
    case ACL_BF16: return kernels::bf16ToFloat(load<std::uint16_t>(p));
    case ACL_DOUBLE: return load<double>(p);
    case ACL_INT8: return load<std::int8_t>(p);
    case ACL_INT16: return load<std::int16_t>(p);
    case ACL_INT32: return load<std::int32_t>(p);
    case ACL_INT64: return static_cast<double>(load<std::int64_t>(p));
    case ACL_UINT8: return load<std::uint8_t>(p);
    default: return load<std::uint8_t>(p) != 0;  // bool
  }
}

std::int64_t readInteger(aclDataType t, const void* p) {
  switch (t) {
    case ACL_INT8: return load<std::int8_t>(p);
    case ACL_INT16: return load<std::int16_t>(p);
    case ACL_INT32: return load<std::int32_t>(p);
    case ACL_INT64: return load<std::int64_t>(p);
    case ACL_UINT8: return load<std::uint8_t>(p);
    case ACL_BOOL: return load<std::uint8_t>(p) != 0;
    default: return static_cast<std::int64_t>(readReal(t, p));
  }
}

void writeReal(aclDataType t, void* p, double v) {
  switch (t) {
    case ACL_FLOAT: store(p, static_cast<float>(v)); break;
    case ACL_FLOAT16: store(p, kernels::floatToHalf(static_cast<float>(v))); break;
    case ACL_BF16: store(p, kernels::floatToBf16(static_cast<float>(v))); break;
    case ACL_DOUBLE: store(p, v); break;
    case ACL_INT8: store(p, static_cast<std::int8_t>(v)); break;
    case ACL_INT16: store(p, static_cast<std::int16_t>(v)); break;
    case ACL_INT32: store(p, static_cast<std::int32_t>(v)); break;
    case ACL_INT64: store(p, static_cast<std::int64_t>(v)); break;
    case ACL_UINT8: store(p, static_cast<std::uint8_t>(v)); break;
    default: store(p, static_cast<std::uint8_t>(v != 0)); break;
  }
}

void writeInteger(aclDataType t, void* p, std::int64_t v) {
  if (isReal(t)) return writeReal(t, p, static_cast<double>(v));
  switch (t) {
    case ACL_INT8: store(p, static_cast<std::int8_t>(v)); break;
    case ACL_INT16: store(p, static_cast<std::int16_t>(v)); break;
    case ACL_INT32: store(p, static_cast<std::int32_t>(v)); break;
    case ACL_INT64: store(p, v); break;
    case ACL_UINT8: store(p, static_cast<std::uint8_t>(v)); break;
    default: store(p, static_cast<std::uint8_t>(v != 0)); break;
  }
}

std::string shapeText(const std::vector<int64_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

std::int64_t elements(const std::vector<int64_t>& dims) {
  std::int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// One operand seen through the output's shape: a stride of 0 along the dimensions it
// is broadcast over.
struct Operand {
  const char* base = nullptr;
  aclDataType type = ACL_FLOAT;
  std::vector<int64_t> strides;  // per output dimension, in bytes
};

Operand through(const aclTensor& t, std::size_t rank) {
  Operand o;
  o.type = t.type;
  const auto e = static_cast<int64_t>(sizeOf(t.type));
  o.base = static_cast<const char*>(t.data) + t.offset * e;
  o.strides.assign(rank, 0);
  const std::size_t lead = rank - t.dims.size();
  for (std::size_t d = 0; d < t.dims.size(); ++d) {
    if (t.dims[d] != 1) o.strides[lead + d] = t.strides[d] * e;
  }
  return o;
}

// The element-wise kernel: every element of `out`, in row-major order of its shape.
Status compute(const aclTensor& self, const aclTensor& other, const aclTensor& out,
               const BinaryFn& fn) {
  const std::size_t rank = out.dims.size();
  const std::int64_t n = elements(out.dims);
  if (n == 0) return Status::Ok();
  const Operand a = through(self, rank), b = through(other, rank);
  aclTensor o = out;
  const Operand w = through(o, rank);
  const bool real = isReal(self.type) || isReal(other.type) || isReal(out.type);
  std::vector<int64_t> index(rank, 0);
  int64_t ao = 0, bo = 0, wo = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const char* pa = a.base + ao;
    const char* pb = b.base + bo;
    char* pw = const_cast<char*>(w.base) + wo;
    if (real) {
      writeReal(out.type, pw, fn.real(readReal(a.type, pa), readReal(b.type, pb)));
    } else {
      writeInteger(out.type, pw, fn.integer(readInteger(a.type, pa), readInteger(b.type, pb)));
    }
    // The odometer: the last dimension moves fastest.
    for (std::size_t d = rank; d-- > 0;) {
      ao += a.strides[d];
      bo += b.strides[d];
      wo += w.strides[d];
      if (++index[d] < out.dims[d]) break;
      ao -= a.strides[d] * out.dims[d];
      bo -= b.strides[d] * out.dims[d];
      wo -= w.strides[d] * out.dims[d];
      index[d] = 0;
    }
  }
  return Status::Ok();
}

Status checkTensor(const char* role, const aclTensor& t) {
  if (!supported(t.type)) {
    return makeError(ErrorCode::kInvalidArgument, "{} has data type {}, which Cohort's aclnn "
                     "does not compute", role, static_cast<int>(t.type));
  }
  if (t.data == nullptr && elements(t.dims) > 0) {
    return makeError(ErrorCode::kInvalidArgument, "{} has no data address", role);
  }
  return Status::Ok();
}

}  // namespace

aclnnStatus binaryOp(const char* function, const aclTensor* self, const aclTensor* other,
                     const aclTensor* out, BinaryFn fn, uint64_t* workspaceSize,
                     aclOpExecutor** executor) {
  for (auto [p, role] : {std::pair<const void*, const char*>{self, "self"}, {other, "other"},
                         {out, "out"}, {workspaceSize, "workspaceSize"}, {executor, "executor"}}) {
    if (p == nullptr) {
      return fail(function, ACLNN_ERR_PARAM_NULLPTR,
                  makeError(ErrorCode::kInvalidArgument, "{} is null", role));
    }
  }
  for (auto [t, role] : {std::pair<const aclTensor*, const char*>{self, "self"}, {other, "other"},
                         {out, "out"}}) {
    const Status s = checkTensor(role, *t);
    if (!s.ok()) return fail(function, ACLNN_ERR_PARAM_INVALID, s);
  }
  // NumPy's broadcast: from the last dimension, equal sizes or one of them 1.
  const std::size_t rank = std::max(self->dims.size(), other->dims.size());
  std::vector<int64_t> shape(rank, 1);
  for (std::size_t k = 0; k < rank; ++k) {
    const int64_t x = k < self->dims.size() ? self->dims[self->dims.size() - 1 - k] : 1;
    const int64_t y = k < other->dims.size() ? other->dims[other->dims.size() - 1 - k] : 1;
    if (x != y && x != 1 && y != 1) {
      return fail(function, ACLNN_ERR_PARAM_INVALID,
                  makeError(ErrorCode::kInvalidArgument,
                            "self {} and other {} do not broadcast (dimension {} from the end: "
                            "{} and {})",
                            shapeText(self->dims), shapeText(other->dims), k, x, y));
    }
    shape[rank - 1 - k] = x == 1 ? y : x;
  }
  if (shape != out->dims) {
    return fail(function, ACLNN_ERR_PARAM_INVALID,
                makeError(ErrorCode::kInvalidArgument,
                          "out has shape {}, but self {} and other {} broadcast to {}",
                          shapeText(out->dims), shapeText(self->dims), shapeText(other->dims),
                          shapeText(shape)));
  }
  auto made = new aclOpExecutor;
  made->op = function;
  made->kernel = [a = *self, b = *other, o = *out, fn = std::move(fn)](runtime::Stream*) {
    return compute(a, b, o, fn);
  };
  *workspaceSize = 0;
  *executor = made;
  return ACLNN_SUCCESS;
}

aclnnStatus run(const char* function, void* workspace, uint64_t workspaceSize,
                aclOpExecutor* executor, aclrtStream stream) {
  if (executor == nullptr) {
    return fail(function, ACLNN_ERR_PARAM_NULLPTR,
                makeError(ErrorCode::kInvalidArgument, "executor is null"));
  }
  // The call uses the executor up (unless repeatable), whether it queues it or not.
  const Status launched =
      workspaceSize > 0 && workspace == nullptr
          ? makeError(ErrorCode::kInvalidArgument, "workspace is null for {} bytes",
                      workspaceSize)
          : runtime::launchKernel(static_cast<runtime::Stream*>(stream), executor->kernel);
  if (!executor->repeatable) delete executor;
  if (launched.ok()) return ACLNN_SUCCESS;
  return fail(function,
              launched.code() == ErrorCode::kInvalidArgument && workspace == nullptr &&
                      workspaceSize > 0
                  ? ACLNN_ERR_PARAM_NULLPTR
                  : ACLNN_ERR_RUNTIME_ERROR,
              launched);
}

}  // namespace cohort::aclnn

using cohort::ErrorCode;
using cohort::makeError;
using cohort::aclnn::fail;

extern "C" {

aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t* stride, int64_t offset, aclFormat format,
                           const int64_t* storageDims, uint64_t storageDimsNum,
                           void* tensorData) {
  const char* fn = "aclCreateTensor";
  if (viewDimsNum > 0 && (viewDims == nullptr || stride == nullptr)) {
    (void)fail(fn, ACLNN_ERR_PARAM_NULLPTR,
               makeError(ErrorCode::kInvalidArgument, "viewDims or stride is null for {} "
                         "dimensions", viewDimsNum));
    return nullptr;
  }
  if (storageDimsNum > 0 && storageDims == nullptr) {
    (void)fail(fn, ACLNN_ERR_PARAM_NULLPTR,
               makeError(ErrorCode::kInvalidArgument, "storageDims is null"));
    return nullptr;
  }
  if (offset < 0) {
    (void)fail(fn, ACLNN_ERR_PARAM_INVALID,
               makeError(ErrorCode::kInvalidArgument, "offset {} is negative", offset));
    return nullptr;
  }
  auto t = new aclTensor;
  t->dims.assign(viewDims, viewDims + viewDimsNum);
  t->strides.assign(stride, stride + viewDimsNum);
  for (int64_t d : t->dims) {
    if (d < 0) {
      (void)fail(fn, ACLNN_ERR_PARAM_INVALID,
                 makeError(ErrorCode::kInvalidArgument, "view dimension {} is negative", d));
      delete t;
      return nullptr;
    }
  }
  t->offset = offset;
  t->type = dataType;
  t->format = format;
  t->data = tensorData;
  return t;
}

aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
  delete tensor;
  return ACLNN_SUCCESS;
}

aclScalar* aclCreateScalar(void* value, aclDataType dataType) {
  const char* fn = "aclCreateScalar";
  if (value == nullptr) {
    (void)fail(fn, ACLNN_ERR_PARAM_NULLPTR, makeError(ErrorCode::kInvalidArgument, "value is null"));
    return nullptr;
  }
  auto s = new aclScalar;
  s->type = dataType;
  switch (dataType) {
    case ACL_FLOAT: s->real = cohort::aclnn::load<float>(value); break;
    case ACL_DOUBLE: s->real = cohort::aclnn::load<double>(value); break;
    case ACL_FLOAT16: case ACL_BF16: s->real = cohort::aclnn::readReal(dataType, value); break;
    case ACL_INT8: case ACL_INT16: case ACL_INT32: case ACL_INT64: case ACL_UINT8: case ACL_BOOL:
      s->integer = cohort::aclnn::readInteger(dataType, value);
      s->real = static_cast<double>(s->integer);
      break;
    default:
      (void)fail(fn, ACLNN_ERR_PARAM_INVALID,
                 makeError(ErrorCode::kInvalidArgument, "data type {} is not a scalar type "
                           "Cohort's aclnn computes", static_cast<int>(dataType)));
      delete s;
      return nullptr;
  }
  if (cohort::aclnn::isReal(dataType)) s->integer = static_cast<int64_t>(s->real);
  return s;
}

aclnnStatus aclDestroyScalar(const aclScalar* scalar) {
  delete scalar;
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewShape(const aclTensor* tensor, int64_t** viewDims, uint64_t* viewDimsNum) {
  if (tensor == nullptr || viewDims == nullptr || viewDimsNum == nullptr) {
    return fail("aclGetViewShape", ACLNN_ERR_PARAM_NULLPTR,
                makeError(ErrorCode::kInvalidArgument, "tensor, viewDims or viewDimsNum is null"));
  }
  *viewDimsNum = tensor->dims.size();
  *viewDims = new int64_t[tensor->dims.size() + 1];
  std::copy(tensor->dims.begin(), tensor->dims.end(), *viewDims);
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetDataType(const aclTensor* tensor, aclDataType* dataType) {
  if (tensor == nullptr || dataType == nullptr) {
    return fail("aclGetDataType", ACLNN_ERR_PARAM_NULLPTR,
                makeError(ErrorCode::kInvalidArgument, "tensor or dataType is null"));
  }
  *dataType = tensor->type;
  return ACLNN_SUCCESS;
}

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor) {
  if (executor == nullptr) {
    return fail("aclSetAclOpExecutorRepeatable", ACLNN_ERR_PARAM_NULLPTR,
                makeError(ErrorCode::kInvalidArgument, "executor is null"));
  }
  executor->repeatable = true;
  return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor) {
  delete executor;
  return ACLNN_SUCCESS;
}

}  // extern "C"
