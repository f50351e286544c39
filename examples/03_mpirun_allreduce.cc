// Example 3: a data-parallel training step in miniature, started by any launcher.
//
//   mpirun -np 4 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29500 mpirun_allreduce
//   cohortrun -n 4 mpirun_allreduce
//   mpirun -np 4 mpirun_allreduce_mpi        (built with MPI: initFromMpi)
//
// Every rank holds a shard of a least-squares problem (y = X w). Per step it
// computes the residual and, bucket by bucket, the gradient X^T r; each bucket is
// allreduced on a link stream as soon as it is computed, so several buckets are
// in flight while the next ones compute. The averaged gradient updates the
// weights; then an allreduce of a hash of the weights with max and with min
// proves that every rank holds the same bits. The run fails unless the weights
// agree after every step and the loss decreases at every step.
#include <cblas.h>
#include <cohort/communicator.h>
#include <cohort/runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string_view>
#include <vector>

#ifdef COHORT_EXAMPLE_USE_MPI
#include <cohort/mpi.h>
#include <mpi.h>
#endif

namespace rt = cohort::runtime;
using cohort::Communicator;
using cohort::DataType;
using cohort::ReduceOp;
using cohort::Status;

#define TRY(expr)                              \
  do {                                         \
    Status try_status_ = (expr);               \
    if (!try_status_.ok()) return try_status_; \
  } while (0)

namespace {

struct Options {
  int steps = 20;
  int features = 2048;
  int samples = 4096;  // per rank
  int buckets = 4;
  float lr = 0.5f;
};

// splitmix64 of a counter, mapped to [-1, 1): deterministic data on every rank.
float uniform(std::uint64_t stream, std::uint64_t index) {
  std::uint64_t x = (stream << 40) + index + 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<float>(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

// Scalars reduced over the ranks each step, in one device buffer.
struct Stats {
  double loss;            // sum of squared residuals (allreduced: sum)
  std::uint64_t hashMax;  // hash of the updated weights (allreduced: max)
  std::uint64_t hashMin;  // the same hash (allreduced: min)
};

// One rank's model, data and streams. Not thread-safe; owns its device memory.
class Trainer {
 public:
  Trainer(Communicator* comm, const Options& o) : comm_(comm), o_(o) {}
  ~Trainer() {
    for (rt::Stream* s : {compute_, link_}) {
      if (s != nullptr) (void)rt::streamDestroy(s);
    }
    for (rt::Event* e : events_) {
      if (e != nullptr) (void)rt::eventDestroy(e);
    }
    for (void* p : allocations_) (void)rt::deviceFree(p);
  }

  Status setUp() {
    TRY(rt::streamCreate(&compute_));
    TRY(rt::streamCreate(&link_));
    events_.resize(o_.buckets + 2);  // one per bucket, stats ready, link done
    for (rt::Event*& e : events_) TRY(rt::eventCreate(&e));
    const auto n = static_cast<std::size_t>(o_.samples), d = static_cast<std::size_t>(o_.features);
    std::vector<float> x(n * d), y(n), truth(d), zeros(d, 0.0f);
    const auto rank = static_cast<std::uint64_t>(comm_->rank());
    for (std::size_t i = 0; i < n * d; ++i) x[i] = uniform(2 + rank, i);
    for (std::size_t j = 0; j < d; ++j) truth[j] = uniform(1, j);
    for (std::size_t i = 0; i < n; ++i) y[i] = 0.01f * uniform(1000 + rank, i);  // noise
    cblas_sgemv(CblasRowMajor, CblasNoTrans, o_.samples, o_.features, 1.0f, x.data(), o_.features,
                truth.data(), 1, 1.0f, y.data(), 1);  // y = X w* + noise
    TRY(upload(x, &x_));
    TRY(upload(y, &y_));
    TRY(upload(zeros, &w_));  // every rank starts from the same weights
    TRY(upload(zeros, &grad_));
    TRY(upload(std::vector<float>(n), &r_));
    void* stats = nullptr;
    TRY(rt::deviceMalloc(&stats, sizeof(Stats)));
    allocations_.push_back(stats);
    stats_ = static_cast<Stats*>(stats);
    return Status::Ok();
  }

  // One step, enqueued without host waits; then the host reads the stats.
  Status step(Stats* out) {
    TRY(kernel([this] { residual(); }));
    TRY(allReduceAfterCompute(&stats_->loss, 1, DataType::kFloat64, ReduceOp::kSum,
                              events_[o_.buckets]));
    const int per = (o_.features + o_.buckets - 1) / o_.buckets;
    for (int b = o_.buckets - 1; b >= 0; --b) {  // "backward": last bucket first
      const int first = b * per, count = std::min(o_.features, first + per) - first;
      if (count <= 0) continue;
      TRY(kernel([this, first, count] { gradient(first, count); }));
      TRY(allReduceAfterCompute(grad_ + first, count, DataType::kFloat32, ReduceOp::kSum,
                                events_[b]));
    }
    rt::Event* linkDone = events_[o_.buckets + 1];
    TRY(rt::eventRecord(linkDone, link_));
    TRY(rt::streamWaitEvent(compute_, linkDone));  // every bucket is reduced
    TRY(kernel([this] { update(); }));
    TRY(allReduceAfterCompute(&stats_->hashMax, 1, DataType::kUint64, ReduceOp::kMax,
                              events_[o_.buckets]));
    TRY(comm_->allReduce(&stats_->hashMin, &stats_->hashMin, 1, DataType::kUint64, ReduceOp::kMin,
                         link_));
    TRY(rt::eventRecord(linkDone, link_));
    TRY(rt::streamWaitEvent(compute_, linkDone));
    TRY(rt::memcpyAsync(out, sizeof(Stats), stats_, sizeof(Stats), rt::MemcpyKind::kDeviceToHost,
                        compute_));
    return rt::streamSynchronize(compute_);
  }

 private:
  Status upload(const std::vector<float>& host, float** out) {
    void* dev = nullptr;
    const std::size_t bytes = host.size() * sizeof(float);
    TRY(rt::deviceMalloc(&dev, bytes));
    allocations_.push_back(dev);
    *out = static_cast<float*>(dev);
    return rt::memcpy(dev, bytes, host.data(), bytes, rt::MemcpyKind::kHostToDevice);
  }

  Status kernel(std::function<void()> body) {
    return rt::launchKernel(compute_, [body = std::move(body)](rt::Stream*) {
      body();
      return Status::Ok();
    });
  }

  // The link stream waits for what compute_ produced so far, then reduces it.
  Status allReduceAfterCompute(void* buf, std::size_t count, DataType type, ReduceOp op,
                               rt::Event* ready) {
    TRY(rt::eventRecord(ready, compute_));
    TRY(rt::streamWaitEvent(link_, ready));
    return comm_->allReduce(buf, buf, count, type, op, link_);
  }

  void residual() {  // r = X w - y; loss = |r|^2
    cblas_scopy(o_.samples, y_, 1, r_, 1);
    cblas_sgemv(CblasRowMajor, CblasNoTrans, o_.samples, o_.features, 1.0f, x_, o_.features, w_, 1,
                -1.0f, r_, 1);
    stats_->loss = cblas_dsdot(o_.samples, r_, 1, r_, 1);
  }

  void gradient(int first, int count) {  // grad[first..] = 2/n X[:, first..]^T r
    cblas_sgemv(CblasRowMajor, CblasTrans, o_.samples, count, 2.0f / o_.samples, x_ + first,
                o_.features, r_, 1, 0.0f, grad_ + first, 1);
  }

  void update() {  // w -= lr * (sum of the ranks' gradients) / ranks; hash w
    cblas_saxpy(o_.features, -o_.lr / comm_->size(), grad_, 1, w_, 1);
    const std::string_view bytes(reinterpret_cast<const char*>(w_), sizeof(float) * o_.features);
    stats_->hashMax = stats_->hashMin = std::hash<std::string_view>{}(bytes);
  }

  Communicator* comm_;
  const Options o_;
  rt::Stream* compute_ = nullptr;
  rt::Stream* link_ = nullptr;
  std::vector<rt::Event*> events_;
  std::vector<void*> allocations_;
  float *x_ = nullptr, *y_ = nullptr, *w_ = nullptr, *grad_ = nullptr, *r_ = nullptr;
  Stats* stats_ = nullptr;
};

// Runs the steps; false (with the reason printed) if a check fails.
Status train(Communicator* comm, const Options& o, bool* ok) {
  Trainer trainer(comm, o);
  TRY(trainer.setUp());
  const bool root = comm->rank() == 0;
  const double samples = static_cast<double>(o.samples) * comm->size();
  double first = 0, previous = 0;
  *ok = true;
  for (int step = 1; step <= o.steps; ++step) {
    Stats stats{};
    TRY(trainer.step(&stats));
    const double loss = stats.loss / samples;  // before this step's update
    const bool same = stats.hashMax == stats.hashMin;
    const bool decreased = step == 1 || loss < previous;
    if (root) {
      fmt::print("step {:>3}  loss {:.6e}  weights {}{}\n", step, loss,
                 same ? "identical on all ranks" : "DIFFER between ranks",
                 decreased ? "" : "  LOSS DID NOT DECREASE");
    }
    *ok = *ok && same && decreased;
    if (step == 1) first = loss;
    previous = loss;
  }
  if (root) {
    fmt::print("{}: loss {:.4e} -> {:.4e} in {} steps on {} ranks ({} buckets of gradients)\n",
               *ok ? "training OK" : "training FAILED", first, previous, o.steps, comm->size(),
               o.buckets);
  }
  // Rank 0 has printed everything before any rank exits (a launcher stops the
  // others as soon as one rank exits non-zero).
  std::fflush(stdout);
  TRY(comm->barrier(nullptr));
  return rt::streamSynchronize(nullptr);
}

Status join(std::unique_ptr<Communicator>* comm, std::string* how) {
#ifdef COHORT_EXAMPLE_USE_MPI
  MPI_Comm local;  // ranks of this machine pick devices 0, 1, ...
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int localRank = 0, devices = 1;
  MPI_Comm_rank(local, &localRank);
  MPI_Comm_free(&local);
  TRY(rt::getDeviceCount(&devices));
  TRY(rt::setDevice(localRank % devices));
  *how = "initFromMpi(MPI_COMM_WORLD)";
  return cohort::initFromMpi(MPI_COMM_WORLD, comm);
#else
  *how = "initFromEnvironment";
  return Communicator::initFromEnvironment(comm);
#endif
}

int run(const Options& o) {
  std::unique_ptr<Communicator> comm;
  std::string how;
  Status s = join(&comm, &how);
  if (!s.ok()) {
    fmt::print(stderr, "mpirun_allreduce: joining the job: {}\n", s.toString());
    return 1;
  }
  if (comm->rank() == 0) {
    fmt::print(
        "Cohort mpirun_allreduce: {} ranks joined with {}; {} features, {} samples per "
        "rank\n",
        comm->size(), how, o.features, o.samples);
  }
  bool ok = false;
  s = train(comm.get(), o, &ok);
  if (!s.ok()) {
    comm->abort();
    fmt::print(stderr, "mpirun_allreduce: rank {}: {}\n", comm->rank(), s.toString());
    return 1;
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  openblas_set_num_threads(1);  // ranks share the cores: one BLAS thread each
  CLI::App app{"mpirun_allreduce: data-parallel least squares with bucketed allreduce"};
  Options o;
  app.add_option("--steps", o.steps, "Training steps")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  app.add_option("--features", o.features, "Model size (weights)")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  app.add_option("--samples", o.samples, "Samples per rank")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  app.add_option("--buckets", o.buckets, "Gradient buckets")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--lr", o.lr, "Learning rate")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
#ifdef COHORT_EXAMPLE_USE_MPI
  MPI_Init(&argc, &argv);
  const int code = run(o);
  MPI_Finalize();
  return code;
#else
  return run(o);
#endif
}
