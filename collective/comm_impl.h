// The communicator's state. One per rank; created by comm_init.cc, operations
// enqueued by comm_ops.cc (comm_calls.cc: the public calls) and run on the
// caller's stream by comm_queue.cc and comm_run.cc.
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
#include "cohort/runtime_capture.h"
#include "collective/device_area.h"
#include "collective/hierarchy_plan.h"
#include "collective/mesh.h"
#include "collective/op.h"
#include "collective/op_history.h"
#include "collective/schedule.h"
#include "collective/selector.h"
#include "common/ring_queue.h"
#include "common/wait.h"
#include "transport/bootstrap.h"
#include "transport/shm/shm_transport.h"
#include "transport/tcp_store.h"
#include "transport/transport.h"

namespace cohort {

/// Thread-safety: enqueue() from one thread at a time, and launches of models that
/// recorded its calls (launchCaptured) are such calls too; runOp() on the worker of
/// the stream an operation was queued on, one operation at a time (comm_ops.cc);
/// a posted call also from enqueue() (the launch's fast path), only while no call
/// is queued; abort()/asyncError() from anywhere. The agreement on failed ranks may
/// replace the store (a standby, when the job's died): failedRanks() and shrink()
/// come after the failure was reported, while no operation of it runs.
class Communicator::Impl {
 public:
  /// Collective over the `size` ranks that share `store` under `prefix`, with
  /// `options` (in force before it connects). The calling thread's current device
  /// must be `device`.
  static Status create(std::shared_ptr<transport::Store> store, const std::string& prefix,
                       const transport::JobToken& token, int rank, int size, int device,
                       const CommOptions& options, std::unique_ptr<Impl>* out);
  ~Impl();

  /// Queues `op` on `stream` (comm_ops.cc has the launch and its contract); on a
  /// capturing stream, records it into the model instead (recordCaptured).
  Status enqueue(collective::OpDesc op, runtime::Stream* stream);
  /// What the stream task of call `ticket` (comm_ops.cc queued it) does: runs
  /// the call, or completes it if an earlier task posted it ahead, and posts
  /// the calls queued right behind it while it waits for its peers.
  Status runQueued(std::uint64_t ticket);
  /// Runs `op` (entry `historyId` of the history) on the worker of its stream.
  Status runOp(const collective::OpDesc& op, std::uint64_t historyId);
  /// `stream` as runtime::streamDescribe() found it when the call began.
  Status validate(const collective::OpDesc& op, const runtime::StreamDescription& stream) const;
  Status split(int color, int key, std::unique_ptr<Impl>* out);
  /// The survivors' agreement on the failed ranks (comm_shrink.cc); made once, then
  /// the same answer. Waits at most until `by` (kTimeout, naming the ranks not
  /// accounted for, when it passed: a later call takes it up again).
  Status agreeOnFailures(std::vector<int>* failed, Deadline by);
  /// A communicator of the ranks outside `failed`, made through the store.
  Status createSurvivors(const std::vector<int>& failed, std::unique_ptr<Impl>* out);
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
  Impl() = default;
  Status connect();
  Status runChosen(const collective::OpDesc& op, std::uint64_t historyId, Deadline deadline);
  /// Ok unless the communicator was aborted or failed (the error names `op`).
  Status usable(const collective::OpDesc& op) const;
  /// What any call must pass before it is queued or recorded: the communicator
  /// usable, the arguments valid.
  Status admit(const collective::OpDesc& op, runtime::Stream* stream,
               runtime::StreamDescription* described) const;
  /// Queues an admitted `op` on `stream` (as admit() described it): the launch
  /// itself (comm_ops.cc).
  Status launchOp(collective::OpDesc op, runtime::Stream* stream,
                  const runtime::StreamDescription& described);
  /// Records `op` into the model `stream` captures: each launch of the model
  /// issues it again (launchCaptured), with a sequence number of its own.
  Status recordCaptured(collective::OpDesc op, runtime::Stream* stream);
  Status launchCaptured(collective::OpDesc op, runtime::LaunchContext& launch);
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
  /// The first failure: explained by the failed peer's note, noted for the
  /// others, and every connection ended (comm_failure.cc). Returns the error.
  Status spreadFailure(Status s, Deadline opDeadline);
  /// A spread failure of a peer or a link: `s` with the survivors' agreement on the
  /// failed ranks, so that every survivor's error names the same ranks.
  Status withAgreement(Status s, Deadline opDeadline);
  std::string failureKey(int r) const;
  /// Whether rank r's failure note says it aborted (it stopped for good).
  bool leftByAbort(int r) const;
  /// Whether the peer's launcher noted that its process ended (comm_shrink.cc).
  bool launcherSawEnd(const transport::PeerInfo& peer) const;
  /// What this rank can tell of rank q for the agreement (comm_shrink.cc).
  char lookAt(int q) const;
  /// One attempt at agreeOnFailures on the current store (under agreeMu_).
  Status agreeOnce(std::vector<int>* failed, Deadline by);
  /// Where `peer` offers its standby store.
  static std::string standbyAddress(const transport::PeerInfo& peer);
  /// Starts (or shares) this process's standby store server at `address`.
  Status startStandby(const std::string& address, int* port);
  /// Makes the first answering rank's standby store this communicator's; false
  /// if none answers (comm_shrink.cc).
  bool useStandbyStore();
  /// Whether rank q's process is known to have ended: only another process of
  /// this node can be looked at (ranks as threads share this one).
  bool nodePeerEnded(int q) const;
  /// A rank of this node whose process ended, as an error naming it (the waits'
  /// check: a peer that died while this rank waits on a live one).
  Status nodePeerGone() const;
  /// Leaves this rank's note that it aborted (for the survivors' agreement), unless
  /// it left one already.
  void noteAbort();
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
  // The launch (comm_ops.cc): the stream of the last call, the event that makes
  // a call on another stream wait for it, and the last call's task's place on
  // its stream. Enqueueing thread only, like enqueue(); finalize() and
  // setAlgorithm() read lastStream once calls stopped.
  struct Launch {
    runtime::Stream* lastStream = nullptr;
    runtime::TaskPlace last;      // where the last call's task landed
    bool lastPlaced = false;      // last.taskIndex is known (not a model's launch)
    runtime::Event* chain = nullptr;
    std::uint64_t tickets = 0;    // calls queued so far
    // Every task of lastStream not run yet is this communicator's (queued since
    // a swept call found the stream idle), the last at `last` (comm_ops.cc).
    bool onlyOurTasks = false;
  } launch_;
  // The calls queued and not finished, in call order: the running one first,
  // then those its task may post ahead of its own completion (comm_queue.cc).
  // Guarded by queuedMu_: the enqueueing thread adds, marks `follows`, and posts
  // and concludes swept calls; the stream workers (one at a time: calls run in
  // order) post, conclude and remove.
  struct Queued {
    std::uint64_t ticket = 0;
    collective::OpDesc op;
    std::uint64_t historyId = 0;
    bool follows = false;    // its task comes right behind the previous call's, on one stream
    bool posted = false;     // posted ahead by an earlier call's task, or by the caller
    bool swept = false;      // the caller's progress and sweep() post and complete it
    bool attached = false;   // swept without a task: the task before it sweeps it
    bool done = false;       // swept and concluded already (by the caller, or sweep())
    std::uint64_t call = 0;  // the mesh's number for it, once posted
    Deadline deadline = Deadline::never();  // once posted
  };
  std::mutex queuedMu_;
  RingQueue<Queued> queued_;
  // The ticket of the task that still sweeps calls attached behind it (0: none),
  // and how many queued calls are not swept. Guarded by queuedMu_: the caller
  // attaches while sweepTicket_ is set, sweep() clears it when it finds nothing
  // more to do.
  std::uint64_t sweepTicket_ = 0;
  std::size_t unswept_ = 0;
  // Swept calls post and conclude in call order, so those posted and those
  // concluded are each a front part of the queue: the tickets of the last of
  // each (tickets of queued calls run on without gaps).
  std::uint64_t sweptPosted_ = 0;
  std::uint64_t sweptDone_ = 0;
  /// The index in queued_ of the call after the one with `ticket` (queuedMu_ held).
  std::size_t indexAfter(std::uint64_t ticket) const;
  // What the caller concludes of the calls it completed (enqueueing thread only;
  // kept to reuse its memory).
  std::vector<Queued> callerDone_;
  // Orders the history's start of swept calls, made by the caller and sweep().
  std::mutex startMu_;
  /// The task of swept calls: posts (waiting for a free slot without the ring's
  /// lock) and completes (waiting for the members likewise) its own call and
  /// those attached behind it, skipping what the caller did meanwhile.
  Status sweep(std::uint64_t ticket);
  /// Whether `q` may be swept on `stream`: the mesh posts it, no queued call is
  /// unswept, and the stream holds nothing but this communicator's tasks
  /// (*chained: since it was last idle; *lastPending: the last task has not
  /// ended) or nothing at all. Never waits.
  bool sweepable(const Queued& q, runtime::Stream* stream,
                 const runtime::StreamDescription& state, bool* chained, bool* lastPending);
  /// The caller's progress (never waiting): posts the queued swept calls whose
  /// slots are free, then `q` if all before it are posted; completes what every
  /// member posted and concludes those queued calls. True if `q` is done.
  bool progressFromCaller(Queued& q);
  /// Posts the queued swept calls not posted yet, in order, while that waits for
  /// nobody (queuedMu_ held; `tryLock`: not even for the ring's lock). True if
  /// every queued call is posted.
  bool postSweptLocked(bool tryLock);
  /// history_->started() of a swept call (queuedMu_ held).
  void startSwept(Queued& q, Deadline deadline);
  /// noteChoice() of a swept call, from the caller or sweep().
  std::string sweptChoice(const collective::OpDesc& op);
  /// Whether the mesh posts `op` when it runs (the run-ahead may post it early).
  bool postable(const collective::OpDesc& op) const;
  /// Posts the first call behind the running one that is not posted yet, if its
  /// task directly follows the previous call's (so nothing of the program's runs
  /// in between: its input is final) and posting it waits for nobody.
  bool postAhead();
  /// Ends calls whose tasks never ran (their stream failed or was aborted).
  void endSkipped(std::vector<Queued> skipped);
  /// Waits for the operations queued so far (their stream: the last call's).
  Status waitForOperations();
  /// Whether launch_.lastStream is still the stream the last call was queued on
  /// (a destroyed stream's address may be a new stream's, of any thread).
  bool lastStreamLives() const;
  // runSchedule()'s last schedule and the shape of call it was built for
  // (operations run one at a time, in call order).
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
  // The agreement (agreeOnFailures), from the user's thread or the stream worker
  // whose operation failed, under agreeMu_: what this rank knows of each rank
  // (empty until it joined), when it stops waiting for silent ranks, the answer.
  std::mutex agreeMu_;
  std::vector<char> known_;
  Deadline silentLimit_ = Deadline::never();
  std::optional<std::vector<int>> agreedFailed_;
  bool usingStandby_ = false;
  Deadline storeSilence_ = Deadline::never();  // set while the store does not answer
  // The standby store server this rank offers (shared with the process's other
  // communicators of the same job; null when the store is in this process).
  std::shared_ptr<transport::TcpStoreServer> standby_;
  std::map<std::string, int> subComms_;  // sub-communicators made per rank list
  collective::DeviceArea scratch_{"communicator scratch memory"};
  collective::DeviceArea stage_{"communicator staging memory"};
  std::atomic<bool> aborted_{false};
  transport::WaitControl waits_;  // every wait of an operation on connections; set by connect()
  /// Operations run so far (a tcp link's retry budget is per operation); read by
  /// the connections, which it outlives.
  std::atomic<std::uint64_t> operationsRun_{0};
  std::unique_ptr<collective::OpHistory> history_;  // made by create(), never null after
  bool failureLogged_ = false;                      // stream worker only
  bool failureSpread_ = false;                      // stream worker only
  std::optional<Status> finalStatus_;  // what finalize() returned, once it ran
  // What the calls recorded in captured models reach this communicator through:
  // models may outlive it, so finalize() unlinks it (under mu, which a launch
  // holds while it queues a call). Shared by the models' tasks.
  struct CaptureLink {
    std::mutex mu;
    Impl* impl = nullptr;
  };
  std::shared_ptr<CaptureLink> captureLink_;  // made at the first recorded call
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
