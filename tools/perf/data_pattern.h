// The data cohort-perf feeds the collectives and the closed forms it checks the
// results against, for every element type and reduction.
//
// Values are small integers chosen so that every result is exact in the element
// type whatever the order of the reduction; the check compares bits. For float sum
// the input is exactly coll_bench_common.h's val(r, i) = ((i + 97r) & 1023) + 1024r,
// so cohort-perf and the peers move the same bytes. Narrower types (or many ranks)
// use (i + 97r) mod M with M small enough that the sum over ranks fits; avg inputs
// are multiples of the rank count so the division is exact; max/min use a pattern
// whose largest element comes from a different rank at each index; prod multiplies
// ones and a few twos.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cohort/communicator.h"

namespace cohort::perf {

/// Names and limits of an element type.
struct TypeInfo {
  DataType type;
  const char* name;      ///< nccl-tests name: float, half, bfloat16, double, int8, ...
  const char* hcclName;  ///< hccl_test name: fp32, fp16, bfp16, fp64, int8, ...
  std::size_t size;
  double maxExact;  ///< largest value the pattern may produce (exact, not the sentinel)
};

const TypeInfo& typeInfo(DataType type);
/// Every type, in nccl-tests' "-d all" order.
std::vector<DataType> allTypes();
/// Accepts the nccl-tests and hccl_test names and a few aliases (fp32, float32, bf16...).
bool parseType(const std::string& text, DataType* out);
/// sum, prod, max, min, avg.
bool parseOp(const std::string& text, ReduceOp* out);
bool isFloatType(DataType type);

/// The inputs and expected reductions of one (type, op, rank count).
class Pattern {
 public:
  /// reduction: the values are combined over ranks with `op` (else op is ignored).
  Pattern(DataType type, ReduceOp op, int nranks, bool reduction);

  /// Rank r's input element i.
  double input(int rank, std::size_t i) const;
  /// input(0, i) op input(1, i) op ... (avg: the sum divided by the rank count).
  double reduced(std::size_t i) const;

 private:
  enum class Form { kPeers, kModular, kPowersOfTwo };
  DataType type_;
  ReduceOp op_;
  int nranks_;
  Form form_ = Form::kPeers;
  double scale_ = 1;  ///< avg: inputs are multiples of the rank count
  std::uint64_t modulus_ = 1;
  int maxTwos_ = 0;  ///< prod: at most this many ranks contribute a 2
};

// ---- Bulk access to device buffers (host-addressable in the emulation) ----------
// Counts and offsets are in elements; run inside stream kernels.

/// buffer[i] = pattern.input(rank, i) for i < count.
void fillInputs(DataType type, void* buffer, std::size_t count, const Pattern& pattern, int rank);
/// Elements i < count whose bits differ from pattern.input(rank, offset + i).
long long countWrongInputs(DataType type, const void* buffer, std::size_t count,
                           const Pattern& pattern, int rank, std::size_t offset);
/// Elements i < count whose bits differ from pattern.reduced(offset + i).
long long countWrongReduced(DataType type, const void* buffer, std::size_t count,
                            const Pattern& pattern, std::size_t offset);
/// Flips the lowest bit of buffer[i] (--inject-error).
void corruptElement(DataType type, void* buffer, std::size_t i);

}  // namespace cohort::perf
