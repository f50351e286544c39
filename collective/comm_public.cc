// The public Communicator: the calls that make one (a root info and its ranks, the
// job's environment, all ranks in one process, splits) and the accessors, each a
// thin layer over Communicator::Impl that records its error for the HCCL layer.
#include <algorithm>
#include <thread>

#include "collective/comm_impl.h"
#include "common/config.h"
#include "common/error.h"
#include "transport/jobenv/job_env.h"
#include "transport/root_info.h"
#include "transport/tcp_store.h"

namespace cohort {

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;

Status Communicator::finalize() { return recordError(impl_->finalize()); }

Status Communicator::destroy(std::unique_ptr<Communicator> comm, bool abortPending) {
  if (comm == nullptr) return Status::Ok();
  if (abortPending) comm->abort();
  Status s = comm->finalize();
  comm.reset();
  return s;
}

Status Communicator::getUniqueId(UniqueId* id) {
  if (id == nullptr)
    return recordError(Status(ErrorCode::kInvalidArgument, "getUniqueId: id is null"));
  transport::RootInfo info;
  std::shared_ptr<transport::TcpStoreServer> server;
  COHORT_RETURN_IF_ERROR(recordError(transport::createRoot(&info, &server)));
  keepStoreServer(server);
  info.toBytes(id->bytes);
  return Status::Ok();
}

Status Communicator::initRank(const UniqueId& id, int nranks, int rank,
                              std::unique_ptr<Communicator>* out, const CommOptions& options) {
  if (out == nullptr || nranks <= 0 || rank < 0 || rank >= nranks) {
    return recordError(makeError(ErrorCode::kInvalidArgument, "initRank: rank {} is not in [0, {})",
                                 rank, nranks));
  }
  transport::RootInfo info;
  COHORT_RETURN_IF_ERROR(recordError(transport::RootInfo::fromBytes(id.bytes, &info)));
  std::shared_ptr<transport::Store> store;
  COHORT_RETURN_IF_ERROR(
      recordError(transport::connectStore(info, rank, connectDeadline(), &store)));
  int device = -1;
  COHORT_RETURN_IF_ERROR(recordError(runtime::getDevice(&device)));
  std::unique_ptr<Impl> impl;
  COHORT_RETURN_IF_ERROR(
      recordError(Impl::create(store, "c", info.token, rank, nranks, device, options, &impl)));
  out->reset(new Communicator(std::move(impl)));
  return Status::Ok();
}

Status Communicator::initFromEnvironment(std::unique_ptr<Communicator>* out) {
  if (out == nullptr)
    return recordError(Status(ErrorCode::kInvalidArgument, "initFromEnvironment: out is null"));
  transport::JobEnvironment job;
  COHORT_RETURN_IF_ERROR(recordError(transport::detectJobEnvironment(&job)));
  int device = -1;
  if (!runtime::getDevice(&device).ok()) {
    device = job.deviceId >= 0 ? job.deviceId : std::max(job.localRank, 0);
    Status s = runtime::setDevice(device);
    if (!s.ok()) {
      return recordError(makeError(s.code(), "rank {} ({}): cannot use device {}: {}", job.rank,
                                   job.source, device, s.message()));
    }
  }
  std::shared_ptr<transport::Store> store;
  transport::JobToken token;
  std::shared_ptr<transport::TcpStoreServer> server;
  COHORT_RETURN_IF_ERROR(
      recordError(transport::connectJobStore(job, connectDeadline(), &store, &token, &server)));
  if (server) keepStoreServer(server);
  std::unique_ptr<Impl> impl;
  COHORT_RETURN_IF_ERROR(
      recordError(Impl::create(store, "env", token, job.rank, job.size, device, {}, &impl)));
  out->reset(new Communicator(std::move(impl)));
  return Status::Ok();
}

Status Communicator::initAll(const std::vector<int>& devices,
                             std::vector<std::unique_ptr<Communicator>>* out,
                             const CommOptions& options) {
  if (out == nullptr || devices.empty()) {
    return recordError(Status(ErrorCode::kInvalidArgument, "initAll: no devices"));
  }
  auto store = std::make_shared<transport::MemoryStore>();
  const transport::JobToken token = transport::JobToken::random();
  const int n = static_cast<int>(devices.size());
  std::vector<std::unique_ptr<Impl>> impls(devices.size());
  std::vector<Status> results(devices.size());
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      const auto i = static_cast<std::size_t>(r);
      results[i] = runtime::setDevice(devices[i]);
      if (results[i].ok())
        results[i] = Impl::create(store, "all", token, r, n, devices[i], options, &impls[i]);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& s : results) COHORT_RETURN_IF_ERROR(recordError(s));
  out->clear();
  for (auto& impl : impls) out->emplace_back(new Communicator(std::move(impl)));
  return Status::Ok();
}

int Communicator::rank() const { return impl_->rank; }
int Communicator::size() const { return impl_->size; }
int Communicator::localRank() const { return impl_->localRank; }
int Communicator::localSize() const { return impl_->localSize; }
int Communicator::nodeCount() const { return impl_->nodes; }
int Communicator::device() const { return impl_->device; }
std::string Communicator::linkReportJson() const { return impl_->report_.toJson(); }
std::string Communicator::lastChoice() const {
  std::lock_guard<std::mutex> lock(impl_->choiceMu_);
  return impl_->lastChoice;
}
void Communicator::abort() { impl_->abort(); }
Status Communicator::setAlgorithm(const std::string& spec) {
  Status s = impl_->waitForOperations();
  if (!s.ok()) return recordError(s);
  return recordError(collective::AlgoOverrides::parse(spec, &impl_->overrides_));
}
Status Communicator::asyncError() const { return impl_->asyncError(); }

Status Communicator::split(int color, int key, std::unique_ptr<Communicator>* out) {
  if (out == nullptr) return recordError(Status(ErrorCode::kInvalidArgument, "split: out is null"));
  std::unique_ptr<Impl> impl;
  COHORT_RETURN_IF_ERROR(recordError(impl_->split(color, key, &impl)));
  if (impl)
    out->reset(new Communicator(std::move(impl)));
  else
    out->reset();
  return Status::Ok();
}

Status Communicator::subCommunicator(const std::vector<int>& ranks,
                                     std::unique_ptr<Communicator>* out, const CommOptions& own) {
  // Ranks not in the list must not call this; so only the listed ranks take part:
  // a split among them keyed by position.
  if (out == nullptr || ranks.empty()) {
    return recordError(Status(ErrorCode::kInvalidArgument, "subCommunicator: empty rank list"));
  }
  std::string key = "sub";
  for (int r : ranks) {
    if (r < 0 || r >= size()) {
      return recordError(makeError(ErrorCode::kInvalidArgument,
                                   "subCommunicator: rank {} is not in [0, {})", r, size()));
    }
    key += "-" + std::to_string(r);
  }
  const auto pos = std::find(ranks.begin(), ranks.end(), rank());
  if (pos == ranks.end()) {
    return recordError(makeError(ErrorCode::kInvalidArgument,
                                 "subCommunicator: this rank ({}) is not in the list", rank()));
  }
  key += "/" + std::to_string(impl_->subComms_[key]++);  // the same list may be used again
  CommOptions options = impl_->options;
  if (!own.name.empty()) options.name = own.name;
  if (own.execTimeoutMs != -1) options.execTimeoutMs = own.execTimeoutMs;
  if (!own.retryEnable.empty()) options.retryEnable = own.retryEnable;
  if (!own.retryParams.empty()) options.retryParams = own.retryParams;
  std::unique_ptr<Impl> impl;
  COHORT_RETURN_IF_ERROR(recordError(
      Impl::create(impl_->store_, impl_->prefix + "/" + key, impl_->token_,
                   static_cast<int>(pos - ranks.begin()), static_cast<int>(ranks.size()),
                   impl_->device, options, &impl)));
  out->reset(new Communicator(std::move(impl)));
  return Status::Ok();
}

}  // namespace cohort
