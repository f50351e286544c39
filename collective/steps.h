// The steps of a schedule, made by the schedule builders (algorithms.cc,
// algorithms_linear.cc): internal to cohort_collective.
#pragma once

#include "collective/schedule.h"

namespace cohort::collective::steps {

// Step{op, peer, src, dst, bytes[, src2, phase]}.
inline Step send(int peer, Buf buf, std::size_t offset, std::size_t bytes) {
  return Step{Step::Op::kSend, peer, {buf, offset}, {}, bytes};
}
inline Step recv(int peer, Buf buf, std::size_t offset, std::size_t bytes) {
  return Step{Step::Op::kRecv, peer, {}, {buf, offset}, bytes};
}
// dst = src (op) message.
inline Step recvReduce(int peer, Range src, Range dst, std::size_t bytes) {
  return Step{Step::Op::kRecvReduce, peer, src, dst, bytes};
}
inline Step copy(Range src, Range dst, std::size_t bytes) {
  return Step{Step::Op::kCopy, -1, src, dst, bytes};
}
inline Step reduceLocal(Range src, Range dst, std::size_t bytes) {
  return Step{Step::Op::kReduce, -1, src, dst, bytes};
}
// Steps of shared schedules (members' buffers are Ranges with a member).
/// dst = src (op) src2.
inline Step combine(Range src, Range src2, Range dst, std::size_t bytes) {
  return Step{Step::Op::kCombine, -1, src, dst, bytes, src2};
}
inline Step average(Range dst, std::size_t bytes) {
  return Step{Step::Op::kAverage, -1, {}, dst, bytes};
}
inline Step signal(const char* phase) { return Step{Step::Op::kSignal, -1, {}, {}, 0, {}, phase}; }
inline Step wait(const char* phase) { return Step{Step::Op::kWait, -1, {}, {}, 0, {}, phase}; }
inline int mod(int a, int n) { return ((a % n) + n) % n; }

}  // namespace cohort::collective::steps
