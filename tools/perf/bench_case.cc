#include "tools/perf/bench_case.h"

#include <vector>

#include "common/error.h"

namespace cohort::perf {

namespace rt = cohort::runtime;

DeviceBuffers::~DeviceBuffers() {
  if (send_ != nullptr) (void)rt::deviceFree(send_);
  if (recv_ != nullptr) (void)rt::deviceFree(recv_);
}

Status DeviceBuffers::allocate(std::size_t bytes, rt::Stream* stream) {
  void* s = nullptr;
  void* r = nullptr;
  Status st = rt::deviceMalloc(&s, bytes);
  if (!st.ok()) return makeError(st.code(), "send buffer of {} bytes: {}", bytes, st.message());
  send_ = static_cast<char*>(s);
  st = rt::deviceMalloc(&r, bytes);
  if (!st.ok()) return makeError(st.code(), "receive buffer of {} bytes: {}", bytes, st.message());
  recv_ = static_cast<char*>(r);
  bytes_ = bytes;
  COHORT_RETURN_IF_ERROR(rt::memsetAsync(send_, bytes, 0, bytes, stream));
  COHORT_RETURN_IF_ERROR(rt::memsetAsync(recv_, bytes, 0, bytes, stream));
  return rt::streamSynchronize(stream);
}

BenchCase::BenchCase(Communicator* comm, rt::Stream* stream, const DeviceBuffers& buffers,
                     const CaseSpec& spec, const Layout& layout, const Pattern& pattern)
    : comm_(comm),
      stream_(stream),
      buffers_(buffers),
      spec_(spec),
      layout_(layout),
      pattern_(pattern),
      rank_(comm->rank()),
      size_(comm->size()) {}

Status BenchCase::launch() const {
  const Layout& l = layout_;
  char* send = buffers_.send();
  char* recv = buffers_.recv();
  const auto rank = static_cast<std::size_t>(rank_);
  switch (spec_.coll) {
    case Coll::kAllReduce:
      return comm_->allReduce(spec_.inPlace ? recv : send, recv, l.paramCount, spec_.type, spec_.op,
                              stream_);
    case Coll::kAllGather:
      return comm_->allGather(spec_.inPlace ? at(recv, rank * l.chunk) : send, recv, l.chunk,
                              spec_.type, stream_);
    case Coll::kReduceScatter:
      if (spec_.inPlace) {
        return comm_->reduceScatter(recv, at(recv, rank * l.chunk), l.chunk, spec_.type, spec_.op,
                                    stream_);
      }
      return comm_->reduceScatter(send, recv, l.chunk, spec_.type, spec_.op, stream_);
    case Coll::kBroadcast:
      return comm_->broadcast(recv, l.paramCount, spec_.type, spec_.root, stream_);
    case Coll::kReduce:
      return comm_->reduce(spec_.inPlace ? recv : send, recv, l.paramCount, spec_.type, spec_.op,
                           spec_.root, stream_);
    case Coll::kAllToAll:
      return comm_->allToAll(send, recv, l.chunk, spec_.type, stream_);
    case Coll::kSendRecv: {
      const int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
      const std::vector<SendRecvItem> items = {{true, send, l.paramCount, spec_.type, next},
                                               {false, recv, l.paramCount, spec_.type, prev}};
      return comm_->batchSendRecv(items, stream_);
    }
  }
  return Status::Ok();
}

Status BenchCase::fill(bool poison) const {
  const Layout& l = layout_;
  const std::size_t e = elementSize();
  char* recv = buffers_.recv();
  const bool isBroadcast = spec_.coll == Coll::kBroadcast;
  // Separate outputs are poisoned; broadcast's non-root buffers always start as
  // the sentinel (the peers' fillBuffers does the same).
  if (isBroadcast ? rank_ != spec_.root : poison && !spec_.inPlace) {
    COHORT_RETURN_IF_ERROR(rt::memsetAsync(recv, buffers_.bytes(), 0xff, l.recvCount * e, stream_));
  }
  if (spec_.coll == Coll::kAllGather && spec_.inPlace && poison) {
    COHORT_RETURN_IF_ERROR(rt::memsetAsync(recv, buffers_.bytes(), 0xff, l.recvCount * e, stream_));
  }
  if (isBroadcast && rank_ != spec_.root) return Status::Ok();
  char* in = spec_.inPlace || isBroadcast ? recv : buffers_.send();
  if (spec_.coll == Coll::kAllGather && spec_.inPlace) {
    in = at(recv, static_cast<std::size_t>(rank_) * l.chunk);
  }
  const std::size_t count = l.sendCount;
  const int source = isBroadcast ? spec_.root : rank_;
  const DataType type = spec_.type;
  const Pattern& pattern = pattern_;
  return rt::launchKernel(stream_, [=, &pattern](rt::Stream*) {
    fillInputs(type, in, count, pattern, source);
    return Status::Ok();
  });
}

char* BenchCase::checkedOutput(std::size_t* count) const {
  const Layout& l = layout_;
  char* recv = buffers_.recv();
  *count = l.recvCount;
  if (spec_.coll == Coll::kReduceScatter && spec_.inPlace) {
    return at(recv, static_cast<std::size_t>(rank_) * l.chunk);
  }
  if (spec_.coll == Coll::kReduce && rank_ != spec_.root) *count = 0;
  return recv;
}

long long BenchCase::countWrong() const {
  const Layout& l = layout_;
  const auto rank = static_cast<std::size_t>(rank_);
  std::size_t count = 0;
  const char* out = checkedOutput(&count);
  const DataType t = spec_.type;
  long long wrong = 0;
  switch (spec_.coll) {
    case Coll::kAllReduce:
    case Coll::kReduce:
      return countWrongReduced(t, out, count, pattern_, 0);
    case Coll::kReduceScatter:
      return countWrongReduced(t, out, l.chunk, pattern_, rank * l.chunk);
    case Coll::kBroadcast:
      return countWrongInputs(t, out, count, pattern_, spec_.root, 0);
    case Coll::kSendRecv:
      return countWrongInputs(t, out, count, pattern_, (rank_ + size_ - 1) % size_, 0);
    case Coll::kAllGather:
    case Coll::kAllToAll:
      for (int j = 0; j < size_; ++j) {
        const std::size_t offset = spec_.coll == Coll::kAllToAll ? rank * l.chunk : 0;
        wrong += countWrongInputs(t, out + static_cast<std::size_t>(j) * l.chunk * elementSize(),
                                  l.chunk, pattern_, j, offset);
      }
      return wrong;
  }
  return wrong;
}

Status BenchCase::check(bool injectError, long long* wrong) const {
  const int target = spec_.coll == Coll::kReduce ? spec_.root : (size_ > 1 ? 1 : 0);
  std::size_t count = 0;
  char* out = checkedOutput(&count);
  const bool corrupt = injectError && rank_ == target && count > 0;
  const DataType type = spec_.type;
  long long result = 0;
  COHORT_RETURN_IF_ERROR(rt::launchKernel(stream_, [&, out, corrupt, type](rt::Stream*) {
    if (corrupt) corruptElement(type, out, 0);
    result = countWrong();
    return Status::Ok();
  }));
  COHORT_RETURN_IF_ERROR(rt::streamSynchronize(stream_));
  *wrong = result;
  return Status::Ok();
}

}  // namespace cohort::perf
