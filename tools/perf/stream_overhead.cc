// --stream-overhead: what the stream path costs an 8-byte allreduce. Three ways to
// call it: back to back on a stream with one synchronize at the end (the call's
// own cost, as in the sweep); on a stream with a synchronize after every call
// (the full round trip the host sees: enqueue, the stream's worker runs the
// call, the synchronize returns); and on the default stream (null) with a
// synchronize after every call, what a program without streams of its own does
// (a call never runs on the calling thread: HCCL's asynchronous contract).
#include <algorithm>
#include <chrono>

#include "common/error.h"
#include "tools/perf/sweep.h"

namespace cohort::perf {

namespace rt = cohort::runtime;

namespace {
constexpr int kMinCalls = 1000;
constexpr int kWarmupCalls = 50;
}  // namespace

Status Sweep::measureStreamOverhead(StreamOverhead* out) {
  const int calls = std::max(kMinCalls, options_.iters);
  auto call = [&](rt::Stream* stream) {
    return comm_->allReduce(buffers_.send(), buffers_.recv(), 2, DataType::kFloat32, ReduceOp::kSum,
                            stream);
  };
  auto onStream = [&] { return call(stream_); };
  auto synchronized = [&] {
    COHORT_RETURN_IF_ERROR(call(stream_));
    return rt::streamSynchronize(stream_);
  };
  auto blocking = [&] {
    COHORT_RETURN_IF_ERROR(call(nullptr));
    return rt::streamSynchronize(nullptr);
  };
  auto warmUp = [&](auto&& each) {
    for (int i = 0; i < kWarmupCalls; ++i) COHORT_RETURN_IF_ERROR(each());
    return Status::Ok();
  };
  // Seconds per call of `calls` calls of `each` and then `finish`, from a barrier.
  auto timed = [&](auto&& each, auto&& finish, double* perCall) {
    COHORT_RETURN_IF_ERROR(barrier());
    const double t0 = nowSeconds();
    for (int i = 0; i < calls; ++i) COHORT_RETURN_IF_ERROR(each());
    COHORT_RETURN_IF_ERROR(finish());
    *perCall = (nowSeconds() - t0) / calls;
    return Status::Ok();
  };
  auto nothing = [] { return Status::Ok(); };
  double v[3] = {};
  COHORT_RETURN_IF_ERROR(warmUp(onStream));
  COHORT_RETURN_IF_ERROR(timed(onStream, [&] { return rt::streamSynchronize(stream_); }, &v[0]));
  COHORT_RETURN_IF_ERROR(timed(synchronized, nothing, &v[1]));
  COHORT_RETURN_IF_ERROR(warmUp(blocking));
  COHORT_RETURN_IF_ERROR(timed(blocking, nothing, &v[2]));
  COHORT_RETURN_IF_ERROR(reduceDoubles(v, 3, ReduceOp::kSum));
  out->calls = calls;
  out->pipelinedUs = v[0] / comm_->size() * 1e6;
  out->synchronizedUs = v[1] / comm_->size() * 1e6;
  out->blockingUs = v[2] / comm_->size() * 1e6;
  return Status::Ok();
}

}  // namespace cohort::perf
