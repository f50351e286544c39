// Tensor and op translation, checked before any Cohort call so that a bad call
// fails on the caller's rank alone and sends nothing.
#include "torch_cohort/tensor_args.h"

#include <c10/util/Exception.h>


namespace cohort::torch_cohort {

namespace {

bool isComplex(at::ScalarType t) {
  return t == at::kComplexFloat || t == at::kComplexDouble || t == at::kComplexHalf;
}

// The Cohort element type behind a torch dtype, and how many of them make one
// torch element (2 for complex); false for dtypes Cohort cannot carry.
bool elementOf(at::ScalarType t, DataType* type, std::size_t* perElement) {
  *perElement = 1;
  switch (t) {
    case at::kFloat: *type = DataType::kFloat32; return true;
    case at::kDouble: *type = DataType::kFloat64; return true;
    case at::kHalf: *type = DataType::kFloat16; return true;
    case at::kBFloat16: *type = DataType::kBFloat16; return true;
    case at::kChar: *type = DataType::kInt8; return true;
    case at::kShort: *type = DataType::kInt16; return true;
    case at::kInt: *type = DataType::kInt32; return true;
    case at::kLong: *type = DataType::kInt64; return true;
    case at::kByte: *type = DataType::kUint8; return true;
    case at::kBool: *type = DataType::kUint8; return true;
    case at::kComplexFloat: *type = DataType::kFloat32; *perElement = 2; return true;
    case at::kComplexDouble: *type = DataType::kFloat64; *perElement = 2; return true;
    case at::kComplexHalf: *type = DataType::kFloat16; *perElement = 2; return true;
    default: return false;
  }
}

const char* redOpName(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

}  // namespace

void checkTensor(const at::Tensor& t, const char* op, const char* role) {
  TORCH_CHECK(t.defined(), "cohort ", op, ": ", role, " is an undefined tensor");
  TORCH_CHECK(t.device().is_cpu(), "cohort ", op, ": ", role, " is on ", t.device(),
              "; the cohort backend takes CPU tensors");
  TORCH_CHECK(t.layout() == at::kStrided, "cohort ", op, ": ", role,
              " is not a dense tensor (layout ", t.layout(), ")");
  TORCH_CHECK(t.is_contiguous(), "cohort ", op, ": ", role,
              " is not contiguous (sizes ", t.sizes(), ", strides ", t.strides(),
              "); call .contiguous() first");
  DataType type;
  std::size_t per = 0;
  TORCH_CHECK(elementOf(t.scalar_type(), &type, &per), "cohort ", op, ": ", role, " has dtype ",
              t.scalar_type(), ", which the cohort backend does not carry");
}

void checkSameType(const at::Tensor& t, const at::Tensor& like, const char* op,
                   const char* role) {
  checkTensor(t, op, role);
  TORCH_CHECK(t.scalar_type() == like.scalar_type(), "cohort ", op, ": ", role, " has dtype ",
              t.scalar_type(), " but the input has ", like.scalar_type());
}

void checkLike(const at::Tensor& t, const at::Tensor& like, const char* op, const char* role) {
  checkSameType(t, like, op, role);
  TORCH_CHECK(t.numel() == like.numel(), "cohort ", op, ": ", role, " has ", t.numel(),
              " elements (sizes ", t.sizes(), ") but the input has ", like.numel(), " (sizes ",
              like.sizes(), ")");
}

const at::Tensor& single(const std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(tensors.size() == 1, "cohort ", op, ": takes one tensor per process, got ",
              tensors.size());
  return tensors[0];
}

Buffer bufferOf(const at::Tensor& t) {
  Buffer b;
  std::size_t per = 1;
  elementOf(t.scalar_type(), &b.type, &per);  // checkTensor refused the others
  b.data = t.data_ptr();
  b.count = static_cast<std::size_t>(t.numel()) * per;
  return b;
}

ReduceOp reduceOpFor(const c10d::ReduceOp& op, at::ScalarType dtype, const char* opName) {
  const c10d::ReduceOp::RedOpType r = op.op_;
  if (isComplex(dtype)) {
    // Elementwise over (re, im) pairs is right for sums only.
    TORCH_CHECK(r == c10d::ReduceOp::SUM || r == c10d::ReduceOp::AVG, "cohort ", opName,
                ": ReduceOp.", redOpName(r), " is not defined for complex tensors (", dtype,
                ")");
  }
  if (dtype == at::kBool) {
    // 0/1 bytes: or is max, and is min (a sum could leave a 2 in a bool).
    switch (r) {
      case c10d::ReduceOp::SUM:
      case c10d::ReduceOp::MAX: return ReduceOp::kMax;
      case c10d::ReduceOp::PRODUCT:
      case c10d::ReduceOp::MIN: return ReduceOp::kMin;
      default: break;
    }
  }
  switch (r) {
    case c10d::ReduceOp::SUM: return ReduceOp::kSum;
    case c10d::ReduceOp::PRODUCT: return ReduceOp::kProd;
    case c10d::ReduceOp::MIN: return ReduceOp::kMin;
    case c10d::ReduceOp::MAX: return ReduceOp::kMax;
    case c10d::ReduceOp::AVG:
      TORCH_CHECK(at::isFloatingType(dtype) || isComplex(dtype), "cohort ", opName,
                  ": ReduceOp.AVG needs a floating-point tensor, not ", dtype);
      return ReduceOp::kAvg;
    default:
      TORCH_CHECK(false, "cohort ", opName, ": ReduceOp.", redOpName(r),
                  " is not supported by the cohort backend (it reduces with SUM, PRODUCT, MIN, "
                  "MAX and AVG)");
  }
}

}  // namespace cohort::torch_cohort
