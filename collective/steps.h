// The steps of a schedule, made by the schedule builders (algorithms.cc,
// algorithms_linear.cc): internal to cohort_collective.
#pragma once

#include "collective/schedule.h"

namespace cohort::collective::steps {

inline Step send(int peer, Buf buf, std::size_t offset, std::size_t bytes) {
  Step s;
  s.op = Step::Op::kSend;
  s.peer = peer;
  s.src = {buf, offset};
  s.bytes = bytes;
  return s;
}
inline Step recv(int peer, Buf buf, std::size_t offset, std::size_t bytes) {
  Step s;
  s.op = Step::Op::kRecv;
  s.peer = peer;
  s.dst = {buf, offset};
  s.bytes = bytes;
  return s;
}
// dst = src (op) message.
inline Step recvReduce(int peer, Range src, Range dst, std::size_t bytes) {
  Step s;
  s.op = Step::Op::kRecvReduce;
  s.peer = peer;
  s.src = src;
  s.dst = dst;
  s.bytes = bytes;
  return s;
}
inline Step copy(Range src, Range dst, std::size_t bytes) {
  Step s;
  s.op = Step::Op::kCopy;
  s.src = src;
  s.dst = dst;
  s.bytes = bytes;
  return s;
}
inline Step reduceLocal(Range src, Range dst, std::size_t bytes) {
  Step s = copy(src, dst, bytes);
  s.op = Step::Op::kReduce;
  return s;
}
inline int mod(int a, int n) { return ((a % n) + n) % n; }

}  // namespace cohort::collective::steps
