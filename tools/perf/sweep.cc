#include "tools/perf/sweep.h"

#include <algorithm>
#include <chrono>

#include "common/error.h"
#include "tools/perf/bench_case.h"

namespace cohort::perf {

namespace rt = cohort::runtime;

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

std::string blockName(const CaseSpec& s) {
  std::string name = peerName(s.coll);
  if (s.type != DataType::kFloat32) name += std::string("_") + typeInfo(s.type).name;
  if (isReduction(s.coll) && s.op != ReduceOp::kSum) name += std::string("_") + reduceOpName(s.op);
  if (s.inPlace && hasInPlaceVariant(s.coll)) name += "_inplace";
  return name;
}

// "allreduce=mesh shm" -> "mesh/shm"; "-" when the last choice is not this
// collective's (point-to-point calls report none).
std::string algoColumn(Coll coll, const std::string& choice) {
  const std::string prefix = std::string(cliName(coll)) + "=";
  if (choice.compare(0, prefix.size(), prefix) != 0) return "-";
  std::string a = choice.substr(prefix.size());
  std::replace(a.begin(), a.end(), ' ', '/');
  return a.empty() ? "-" : a;
}

}  // namespace

Sweep::Sweep(Communicator* comm, rt::Stream* stream, const PerfOptions& options)
    : comm_(comm), stream_(stream), options_(options) {}

Sweep::~Sweep() {
  if (stats_ != nullptr) (void)rt::deviceFree(stats_);
}

std::vector<std::size_t> Sweep::sizes() const {
  return options_.hccl
             ? hcclSizes(options_.minBytes, options_.maxBytes, options_.factor, options_.stepBytes)
             : ncclSizes(options_.minBytes, options_.maxBytes, options_.factor, options_.stepBytes);
}

Status Sweep::prepare() {
  const auto all = sizes();
  const std::size_t largest = all.empty() ? 0 : *std::max_element(all.begin(), all.end());
  // hccl_test rounds counts up: room for one more element of the widest type.
  COHORT_RETURN_IF_ERROR(buffers_.allocate(largest + 64, stream_));
  return rt::deviceMalloc(&stats_, 4 * sizeof(double));
}

Status Sweep::reduceDoubles(double* v, int n, ReduceOp op) {
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(double);
  COHORT_RETURN_IF_ERROR(
      rt::memcpy(stats_, 4 * sizeof(double), v, bytes, rt::MemcpyKind::kHostToDevice));
  COHORT_RETURN_IF_ERROR(comm_->allReduce(stats_, stats_, static_cast<std::size_t>(n),
                                          DataType::kFloat64, op, stream_));
  COHORT_RETURN_IF_ERROR(rt::streamSynchronize(stream_));
  return rt::memcpy(v, bytes, stats_, bytes, rt::MemcpyKind::kDeviceToHost);
}

Status Sweep::barrier() {
  COHORT_RETURN_IF_ERROR(comm_->barrier(stream_));
  return rt::streamSynchronize(stream_);
}

Status Sweep::probe(std::string* choice) {
  COHORT_RETURN_IF_ERROR(comm_->allReduce(buffers_.send(), buffers_.recv(), 2, DataType::kFloat32,
                                          ReduceOp::kSum, stream_));
  COHORT_RETURN_IF_ERROR(rt::streamSynchronize(stream_));
  *choice = comm_->lastChoice();
  return Status::Ok();
}

std::vector<BlockResult> Sweep::plan() const {
  std::vector<BlockResult> blocks;
  for (Coll c : options_.collectives) {
    if (c == Coll::kSendRecv && comm_->size() < 2 && options_.allCollectives) continue;
    for (DataType t : options_.types) {
      for (ReduceOp op : options_.ops) {
        if (isReduction(c) && op == ReduceOp::kAvg && !isFloatType(t)) continue;
        for (int placement = 0; placement < (options_.inPlace ? 2 : 1); ++placement) {
          BlockResult b;
          b.spec = CaseSpec{c, t, op, placement == 1 || c == Coll::kBroadcast, options_.root};
          if (placement == 1 && !hasInPlaceVariant(c)) continue;
          b.name = blockName(b.spec);
          blocks.push_back(b);
        }
        if (!isReduction(c)) break;  // the op does not matter
      }
    }
  }
  return blocks;
}

Status Sweep::applyAlgorithm(BlockResult* block) {
  const std::string& a = options_.algorithm;
  if (a.empty() || a.find('=') != std::string::npos) return Status::Ok();  // set once by main
  const std::string spec = std::string(cliName(block->spec.coll)) + "=" + a;
  Status s = comm_->setAlgorithm(spec);
  if (s.ok() || options_.collectives.size() == 1) return s;
  block->note =
      "-A " + a + " does not apply to " + cliName(block->spec.coll) + "; the built-in choice runs";
  return comm_->setAlgorithm("");
}

Status Sweep::timeCalls(const BenchCase& bench, int iters, double* seconds) {
  COHORT_RETURN_IF_ERROR(barrier());
  const double t0 = nowSeconds();
  for (int i = 0; i < iters; ++i) COHORT_RETURN_IF_ERROR(bench.launch());
  COHORT_RETURN_IF_ERROR(rt::streamSynchronize(stream_));
  *seconds = (nowSeconds() - t0) / iters;
  return Status::Ok();
}

Status Sweep::runSize(const BlockResult& block, std::size_t requested, RowResult* row) {
  const CaseSpec& spec = block.spec;
  const std::size_t e = typeInfo(spec.type).size;
  const int n = comm_->size();
  const Layout l = options_.hccl ? hcclLayout(spec.coll, requested, n, e)
                                 : ncclLayout(spec.coll, requested, n, e);
  const Pattern pattern(spec.type, spec.op, n, isReduction(spec.coll));
  const BenchCase bench(comm_, stream_, buffers_, spec, l, pattern);
  int iters = 0, warmup = 0;
  budgetIterations(options_, l.bytes, &iters, &warmup);
  // The inputs are in place and the warm-up calls done before the timed ones
  // (as nccl-tests completes its warm-up): otherwise a call queued behind the
  // fill runs on the communicator's stream worker, and the barrier that starts
  // the timing waits for two thread wake-ups that one rank pays and the other
  // does not (2 ranks, 1 KiB, 50 calls: 1.1-2.6 us a call instead of 0.8).
  COHORT_RETURN_IF_ERROR(bench.fill(false));
  COHORT_RETURN_IF_ERROR(rt::streamSynchronize(stream_));
  for (int i = 0; i < warmup; ++i) COHORT_RETURN_IF_ERROR(bench.launch());
  COHORT_RETURN_IF_ERROR(rt::streamSynchronize(stream_));
  double local = 0;
  COHORT_RETURN_IF_ERROR(timeCalls(bench, iters, &local));
  row->algo = algoColumn(spec.coll, comm_->lastChoice());
  long long wrong = 0;
  if (options_.check != 0) {
    COHORT_RETURN_IF_ERROR(bench.fill(true));
    COHORT_RETURN_IF_ERROR(barrier());
    COHORT_RETURN_IF_ERROR(bench.launch());
    COHORT_RETURN_IF_ERROR(rt::streamSynchronize(stream_));
    COHORT_RETURN_IF_ERROR(bench.check(options_.injectError, &wrong));
  }
  double sum[2] = {local, static_cast<double>(wrong)}, mn = local, mx = local;
  COHORT_RETURN_IF_ERROR(reduceDoubles(sum, 2, ReduceOp::kSum));
  if (options_.average == 2) COHORT_RETURN_IF_ERROR(reduceDoubles(&mn, 1, ReduceOp::kMin));
  if (options_.average == 3) COHORT_RETURN_IF_ERROR(reduceDoubles(&mx, 1, ReduceOp::kMax));
  const double t = options_.average == 0   ? local
                   : options_.average == 1 ? sum[0] / n
                   : options_.average == 2 ? mn
                                           : mx;
  row->bytes = l.bytes;
  row->count = l.paramCount;
  row->iters = iters;
  row->timeUs = t * 1e6;
  row->algbw = static_cast<double>(l.bwBytes) / t / 1e9;
  row->busbw = row->algbw * busFactor(spec.coll, n);
  row->wrong = options_.check != 0 ? static_cast<long long>(sum[1]) : -1;
  return Status::Ok();
}

Status Sweep::runBlock(BlockResult* block, SweepListener* listener) {
  COHORT_RETURN_IF_ERROR(applyAlgorithm(block));
  listener->blockStarted(*block);
  const auto all = sizes();
  double busSum = 0;
  int index = 0;
  for (std::size_t requested : all) {
    ++index;
    const std::size_t e = typeInfo(block->spec.type).size;
    const Layout l = options_.hccl ? hcclLayout(block->spec.coll, requested, comm_->size(), e)
                                   : ncclLayout(block->spec.coll, requested, comm_->size(), e);
    if (l.bytes == 0 || l.paramCount == 0) continue;  // as the peers: nothing to move
    listener->sizeStarted(*block, l.bytes, index, static_cast<int>(all.size()));
    RowResult row;
    Status s = runSize(*block, requested, &row);
    if (!s.ok()) {
      return makeError(s.code(), "{} at {} bytes on rank {}: {}", block->name, l.bytes,
                       comm_->rank(), s.message());
    }
    block->rows.push_back(row);
    block->wrong += std::max(0LL, row.wrong);
    busSum += row.busbw;
    listener->rowDone(*block, row);
  }
  block->avgBusbw = block->rows.empty() ? 0 : busSum / static_cast<double>(block->rows.size());
  listener->blockDone(*block);
  return Status::Ok();
}

}  // namespace cohort::perf
