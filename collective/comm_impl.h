// The communicator's state. One per rank; created by comm_init.cc, operations
// enqueued by comm_ops.cc, launched as comm_launch.cc decides, and run by
// comm_run.cc (on the communicator's stream, or inline).
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cohort/communicator.h"
#include "collective/device_area.h"
#include "collective/hierarchy_plan.h"
#include "collective/mesh.h"
#include "collective/op.h"
#include "collective/op_history.h"
#include "collective/schedule.h"
#include "collective/selector.h"
#include "common/wait.h"
#include "runtime/hooks.h"
#include "transport/bootstrap.h"
#include "transport/shm/shm_transport.h"
#include "transport/transport.h"

namespace cohort {

/// Thread-safety: enqueue() from one thread at a time; runOp() on the stream
/// worker; abort()/asyncError() from anywhere.
class Communicator::Impl {
 public:
  /// Collective over the `size` ranks that share `store` under `prefix`, with
  /// `options` (in force before it connects). The calling thread's current device
  /// must be `device`.
  static Status create(std::shared_ptr<transport::Store> store, const std::string& prefix,
                       const transport::JobToken& token, int rank, int size, int device,
                       const CommOptions& options, std::unique_ptr<Impl>* out);
  ~Impl();

  Status enqueue(collective::OpDesc op, runtime::Stream* stream);
  /// Runs `op` (entry `historyId` of the history) on the stream worker, or
  /// inline with the algorithm runsInline() chose (kAuto: choose here).
  Status runOp(const collective::OpDesc& op, std::uint64_t historyId,
               collective::Algo chosen = collective::Algo::kAuto);
  /// Posts `op` (the mesh's small collectives) inline and leaves its completion
  /// to the caller's stream (runtime::streamDefer): its output is written when
  /// a host thread synchronizes that stream, or a later call needs it.
  /// `knownLive`: `stream` was found live under the current resource generation.
  Status postOp(const collective::OpDesc& op, runtime::Stream* stream, bool knownLive);
  Status validate(const collective::OpDesc& op, runtime::Stream* stream) const;
  /// How `op` launches (comm_launch.cc): on the communicator's stream, inline on
  /// the calling thread, or posted; *algo is the algorithm for the last two.
  /// `enqueued`/`completed`: the caller's stream's progress. `repeat`: checked_
  /// describes this call, so what depends on its arguments alone (the algorithm,
  /// the size decision) is reused from there. `groupOfSeveral`: groupEnd() is
  /// launching a group over several communicators.
  enum class LaunchMode { kWorker, kInline, kPosted };
  LaunchMode chooseLaunch(const collective::OpDesc& op, runtime::Stream* stream, bool repeat,
                          std::uint64_t enqueued, std::uint64_t completed, bool groupOfSeveral,
                          collective::Algo* algo);
  Status split(int color, int key, std::unique_ptr<Impl>* out);
  /// Communicator::finalize(); the destructor calls it too.
  Status finalize();
  void abort();
  Status asyncError() const;
  void setAsyncError(const Status& s);

  int rank = 0, size = 0, device = -1, localRank = 0, localSize = 1, nodes = 1;
  std::string prefix;
  /// What create() was given (sub-communicators inherit them); set once, before
  /// it connects.
  CommOptions options;
  /// The exec timeout in force, in ms (0 = never).
  long execTimeoutMs() const;
  /// What the last operation chose; written by whichever thread runs
  /// operations, read by the user's (lastChoice()) under choiceMu_.
  std::string lastChoice;
  std::array<std::size_t, 3> lastChoiceKey_{};  // collective, algorithm, piece count
  mutable std::mutex choiceMu_;

 private:
  /// Whether `op` may run on the calling thread (chooseLaunch's first question).
  bool runsInline(const collective::OpDesc& op, runtime::Stream* stream, bool repeat,
                  std::uint64_t enqueued, std::uint64_t completed, collective::Algo* algo);
  Impl() = default;
  Status connect();
  Status runChosen(const collective::OpDesc& op, std::uint64_t historyId, Deadline deadline,
                   collective::Algo algo);
  void logFailure(const Status& failure);
  /// The end of an operation (entry `historyId` of the history) with status `s`:
  /// an error names this rank and the operation and spreads (spreadFailure);
  /// the history and the node registry note it. Returns the status to report.
  Status concludeOp(const collective::OpDesc& op, std::uint64_t historyId, Status s,
                    Deadline deadline);
  /// The history's text for this operation's algorithm (lastChoice, made again
  /// only when the collective, algorithm or piece count changes).
  const std::string& noteChoice(const collective::OpDesc& op, collective::Algo algo,
                                std::size_t pieceCount);
  /// Runs the completions deferred on posted_.on (this communicator's and any
  /// other's there) if this communicator's is pending; ok if none is.
  Status completeDeferred();
  /// The first failure: explained by the failed peer's note, noted for the
  /// others, and every connection ended (comm_failure.cc). Returns the error.
  Status spreadFailure(Status s, Deadline opDeadline);
  std::string failureKey(int r) const;
  Status runAlgorithm(const collective::OpDesc& op, collective::Algo algo, Deadline deadline);
  Status runSchedule(const collective::OpDesc& op, collective::Algo algo, Deadline deadline);
  Status runSendRecv(const collective::OpDesc& op, Deadline deadline);
  // hierarchy.cc
  Status runHierarchical(const collective::OpDesc& op, Deadline deadline);
  /// Parts [from, to) of `plan`; `slice`: the block an enclosing node allreduce hands over.
  Status runParts(const collective::OpDesc& op, const collective::HierPlan& plan, std::size_t from,
                  std::size_t to, char* staging, char* slice, Deadline deadline);
  Status runCross(const collective::Schedule& sched, const collective::OpDesc& op, const char* in,
                  char* out, Deadline deadline);
  int crossIndexOf(int r) const;
  /// Device memory that holds a hierarchical step's result for the next step
  /// (apart from scratch(), which each step may use for itself).
  Status stage(std::size_t bytes, void** out) { return stage_.get(bytes, out); }
  void buildGroups(transport::shm::ShmTransport* shm);
  Status scratch(std::size_t bytes, void** out);
  Deadline execDeadline() const;

  std::shared_ptr<transport::Store> store_;
  transport::JobToken token_;
  std::unique_ptr<transport::Bootstrap> bootstrap_;
  std::vector<transport::PeerInfo> peers_;
  transport::Transports transports_;
  std::vector<std::unique_ptr<transport::Connection>> conns_;
  std::vector<transport::Connection*> connPtrs_;
  transport::LinkReport report_;
  std::unique_ptr<collective::Mesh> mesh_;  // all ranks, or this node's ranks (hierarchical)
  std::vector<transport::Connection*> crossConns_;  // same local index on each node, by node
  int crossRank_ = 0;
  collective::Topology topo_;
  collective::AlgoOverrides overrides_;
  std::uint64_t seq_ = 0;
  // The worker launch (comm_ops.cc): the communicator's stream, the events that
  // order it after the caller's work and the caller's stream after it, and where
  // the last call left both streams. Enqueueing thread only, like enqueue().
  struct Worker {
    runtime::Stream* stream = nullptr;
    runtime::Event* before = nullptr;
    runtime::Event* after = nullptr;
    runtime::Stream* lastUserStream = nullptr;  // the caller's stream of the last op
    std::uint64_t lastUserEnqueued = 0;         // its task count right after that op
    std::uint64_t afterRecordedAt = 0;          // stream's task count right after after's record
  } worker_;
  // postOp(): the stream that holds its completion (one for every call posted
  // until it runs; it captures this communicator), and whether it has not run
  // (cleared by whichever thread runs it).
  struct Posted {
    runtime::Stream* on = nullptr;
    std::atomic<bool> pending{false};
  } posted_;
  // The last fixed-size call that passed validate(), and what runsInline()
  // derived from its arguments alone. A repeat of it (same arguments and
  // stream, runtime::resourceGeneration() unchanged: no buffer or stream can
  // have gone) skips both. enqueue() only.
  struct CheckedCall {
    collective::Coll coll = collective::Coll::kAllReduce;
    const void* input = nullptr;
    void* output = nullptr;
    std::size_t count = 0;
    DataType type = DataType::kFloat32;
    ReduceOp op = ReduceOp::kSum;
    int root = 0;
    runtime::Stream* stream = nullptr;
    std::uint64_t generation = 0;  // 0: nothing checked yet
    bool small = false;            // runsInline's size condition, for `algo`
    collective::Algo algo = collective::Algo::kAuto;
    runtime::StreamCounters counters{};  // the caller's stream's
    bool ownStreamLive = false;          // the communicator's worker_.stream was found live
    runtime::StreamCounters own{};       // worker_.stream's, read while ownStreamLive
    bool repeats(const collective::OpDesc& o, runtime::Stream* s, std::uint64_t g) const {
      return g == generation && s == stream && o.coll == coll && o.input == input &&
             o.output == output && o.count == count && o.type == type && o.op == op &&
             o.root == root && o.counts.empty() && o.items.empty();
    }
  };
  CheckedCall checked_;
  // runSchedule()'s last schedule and the shape of call it was built for
  // (operations run one at a time: on the stream, or inline while it is idle).
  struct ScheduleKey {
    bool cacheable = false;  // fixed-size collective: the fields below say it all
    collective::Coll coll = collective::Coll::kAllReduce;
    collective::Algo algo = collective::Algo::kAuto;
    std::size_t count = 0;
    DataType type = DataType::kFloat32;
    int root = 0;
    std::uintptr_t inputFromOutput = 0;  // input address minus output address
    std::size_t buffSize = 0;
    bool operator==(const ScheduleKey& o) const {
      return cacheable && o.cacheable && coll == o.coll && algo == o.algo && count == o.count &&
             type == o.type && root == o.root && inputFromOutput == o.inputFromOutput &&
             buffSize == o.buffSize;
    }
  };
  ScheduleKey scheduleKey_;
  collective::Schedule schedule_;
  int splits_ = 0;
  std::map<std::string, int> subComms_;  // sub-communicators made per rank list
  collective::DeviceArea scratch_{"communicator scratch memory"};
  collective::DeviceArea stage_{"communicator staging memory"};
  std::atomic<bool> aborted_{false};
  std::unique_ptr<collective::OpHistory> history_;  // made by create(), never null after
  bool failureLogged_ = false;                      // stream worker only
  bool failureSpread_ = false;                      // stream worker only
  // Set at connect: every peer is another process, or options.threadPerRank.
  bool inlineSmall_ = false;
  enum class Launch { kAuto, kWorker, kInline };
  Launch launch_ = Launch::kAuto;  // COHORT_LAUNCH, read at create
  std::optional<Status> finalStatus_;  // what finalize() returned, once it ran
  // The first asynchronous error (asyncError()), set from any thread.
  struct FirstError {
    mutable std::mutex mu;
    Status error;
    std::atomic<bool> failed{false};  // error is set (read without the lock)
  } firstError_;

  friend class Communicator;
};

namespace transport {
class TcpStoreServer;
}  // namespace transport

/// Keeps a store server this process started serving until the process exits (the
/// other ranks may still join through it). Thread-safe.
void keepStoreServer(std::shared_ptr<transport::TcpStoreServer> server);

}  // namespace cohort
