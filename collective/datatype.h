// Element types and the reduction kernels over them. fp16 and bf16 are reduced
// in fp32 and rounded to nearest even.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cohort/communicator.h"
#include "transport/connection.h"

namespace cohort::collective {

/// The binary kernel dst = a (op) b for a type and op (kAvg reduces as kSum; the
/// caller divides at the end with finishAverage).
const transport::Reduction& reductionFor(DataType type, ReduceOp op);
/// data[i] /= n for the float types (avg).
void finishAverage(void* data, std::size_t count, DataType type, int n);
bool isFloat(DataType type);
bool validType(DataType type);
bool validOp(ReduceOp op);

float halfToFloat(std::uint16_t h);
std::uint16_t floatToHalf(float f);
float bf16ToFloat(std::uint16_t b);
std::uint16_t floatToBf16(float f);

}  // namespace cohort::collective
