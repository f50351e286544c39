// --stream-overhead: what the stream path costs an 8-byte allreduce. Every call is
// asynchronous on a stream (the API has no other path), so the comparison is between
// back-to-back calls with one synchronize at the end (the call's own cost, as in
// the sweep) and a synchronize after every call (the full round trip the host sees:
// enqueue, events between the caller's and the communicator's stream, completion).
#include <algorithm>
#include <chrono>

#include "common/error.h"
#include "tools/perf/sweep.h"

namespace cohort::perf {

namespace rt = cohort::runtime;

namespace {
constexpr int kMinCalls = 1000;
constexpr int kWarmupCalls = 50;

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Status Sweep::measureStreamOverhead(StreamOverhead* out) {
  const int calls = std::max(kMinCalls, options_.iters);
  auto call = [&] {
    return comm_->allReduce(buffers_.send(), buffers_.recv(), 2, DataType::kFloat32, ReduceOp::kSum,
                            stream_);
  };
  for (int i = 0; i < kWarmupCalls; ++i) COHORT_RETURN_IF_ERROR(call());
  COHORT_RETURN_IF_ERROR(barrier());
  double t0 = nowSeconds();
  for (int i = 0; i < calls; ++i) COHORT_RETURN_IF_ERROR(call());
  COHORT_RETURN_IF_ERROR(rt::streamSynchronize(stream_));
  const double pipelined = (nowSeconds() - t0) / calls;
  COHORT_RETURN_IF_ERROR(barrier());
  t0 = nowSeconds();
  for (int i = 0; i < calls; ++i) {
    COHORT_RETURN_IF_ERROR(call());
    COHORT_RETURN_IF_ERROR(rt::streamSynchronize(stream_));
  }
  const double synchronized = (nowSeconds() - t0) / calls;
  double v[2] = {pipelined, synchronized};
  COHORT_RETURN_IF_ERROR(reduceDoubles(v, 2, ReduceOp::kSum));
  out->calls = calls;
  out->pipelinedUs = v[0] / comm_->size() * 1e6;
  out->synchronizedUs = v[1] / comm_->size() * 1e6;
  return Status::Ok();
}

}  // namespace cohort::perf
