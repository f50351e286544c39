// An in-memory NIC for the rdma connection's tests: queue pairs that execute
// the same work requests a NIC would, with RC's guarantees and its refusals
// (bad keys, ranges, missing receives), and a connected pair of ranks over them.
#pragma once

#include <arpa/inet.h>

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "cohort/runtime.h"
#include "common/error.h"
#include "test_util.h"
#include "transport/rdma/rdma_connection.h"
#include "transport/rdma/rdma_qp_attributes.h"

namespace cohort::transport::rdma::fake {

class FakeQueuePair;

// The keys a NIC would know: lkey == rkey -> registered range; and its queue
// pairs by number (what a rejoin connects to).
struct FakeNic {
  std::map<std::uint32_t, std::pair<std::uintptr_t, std::size_t>> keys;
  std::uint32_t nextKey = 0x100;
  int registrations = 0;
  std::map<std::uint32_t, FakeQueuePair*> qps;
  std::uint32_t nextQpn = 0x100;
  std::vector<std::string> retiredFaults;  // of queue pairs destroyed
  bool covers(std::uint32_t key, std::uint64_t addr, std::size_t length) const {
    auto it = keys.find(key);
    return it != keys.end() && addr >= it->second.first &&
           addr + length <= it->second.first + it->second.second;
  }
};

class FakeRegistrar : public Registrar {
 public:
  explicit FakeRegistrar(FakeNic* nic) : nic_(nic) {}
  Status registerMemory(void* addr, std::size_t length, int, MemoryRegion* out) override {
    const std::uint32_t key = nic_->nextKey++;
    nic_->keys[key] = {reinterpret_cast<std::uintptr_t>(addr), length};
    ++nic_->registrations;
    *out = MemoryRegion{addr, length, key, key, nullptr};
    return Status::Ok();
  }
  void deregister(const MemoryRegion& region) override { nic_->keys.erase(region.lkey); }

 private:
  FakeNic* nic_;
};

class FakeQueuePair : public QueuePair {
 public:
  FakeQueuePair(FakeNic* nic, std::uint32_t qpn) : nic_(nic), qpn_(qpn) { nic_->qps[qpn] = this; }
  ~FakeQueuePair() override {
    if (peer) peer->peer = nullptr;
    nic_->qps.erase(qpn_);
    nic_->retiredFaults.insert(nic_->retiredFaults.end(), faults.begin(), faults.end());
  }

  int postSend(ibv_send_wr* wr) override {
    for (; wr; wr = wr->next) {
      if (++sendQueueUsed_ > kSendQueueDepth) faults.push_back("send queue overflow");
      if (broken_ || failNext != IBV_WC_SUCCESS) {
        complete(wr->wr_id, broken_ ? IBV_WC_WR_FLUSH_ERR : failNext);
        failNext = IBV_WC_SUCCESS;
        broken_ = true;
        continue;
      }
      if (wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM || !(wr->send_flags & IBV_SEND_SIGNALED)) {
        faults.push_back("not a signaled RDMA WRITE WITH IMMEDIATE");
      }
      Write w{wr->wr_id, wr->wr.rdma.remote_addr, wr->wr.rdma.rkey, ntohl(wr->imm_data), {}};
      for (int i = 0; i < wr->num_sge; ++i) {
        const ibv_sge& s = wr->sg_list[i];
        if (!nic_->covers(s.lkey, s.addr, s.length)) faults.push_back("local key/range refused");
        if (i > 0) payloadKeys.insert(s.lkey);
        const auto* p = reinterpret_cast<const std::uint8_t*>(s.addr);
        w.bytes.insert(w.bytes.end(), p, p + s.length);
      }
      pending_.push_back(std::move(w));
    }
    if (!hold) deliver();
    return 0;
  }
  int postRecv(ibv_recv_wr* wr) override {
    for (; wr; wr = wr->next) recvs_.push_back(wr->wr_id);
    if (recvs_.size() > kRecvDepth) faults.push_back("receive queue overflow");
    return 0;
  }
  int poll(int max, ibv_wc* wc) override {
    int n = 0;
    for (; n < max && !cq_.empty(); ++n) {
      wc[n] = cq_.front().first;
      if (cq_.front().second) --sendQueueUsed_;
      cq_.pop_front();
    }
    return n;
  }
  int armNotify() override { return -1; }
  void drainNotify() override {}
  std::uint32_t qpNumber() const override { return qpn_; }
  // As a NIC does: every request still posted completes, flushed.
  void toError() override {
    broken_ = true;
    for (const Write& w : pending_) complete(w.wrId, IBV_WC_WR_FLUSH_ERR);
    pending_.clear();
    for (std::uint64_t id : recvs_) complete(id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV);
    recvs_.clear();
  }
  // The wire between this queue pair and its peer is cut: the next write this
  // end executes finds no ACK and the queue pair goes to error, as a NIC's
  // transport retries would end.
  void cut() { cut_ = true; }
  // Executes the first `n` writes held back.
  void deliver(int n) {
    for (; n > 0 && !pending_.empty(); --n) {
      const Write w = std::move(pending_.front());
      pending_.pop_front();
      execute(w);
    }
  }

  // Executes the writes held back so far, in order.
  void deliver() { deliver(static_cast<int>(pending_.size())); }
  // Queues a raw signal to the peer, as a misbehaving peer would.
  void inject(std::uint32_t imm) {
    Write w{makeWrId(WorkTag::kControl, 0), 0, 0, imm, {}};
    execute(w);
    cq_.pop_back();  // nobody owns this send's completion
    --sendQueueUsed_;
  }

  FakeQueuePair* peer = nullptr;
  bool hold = false;
  ibv_wc_status failNext = IBV_WC_SUCCESS;
  std::vector<std::string> faults;
  int dataWrites = 0;
  std::set<std::uint32_t> payloadKeys;

 private:
  struct Write {
    std::uint64_t wrId;
    std::uint64_t addr;
    std::uint32_t rkey;
    std::uint32_t imm;
    std::vector<std::uint8_t> bytes;
  };
  void complete(std::uint64_t wrId, ibv_wc_status status, ibv_wc_opcode op = IBV_WC_RDMA_WRITE) {
    ibv_wc wc{};
    wc.wr_id = wrId;
    wc.status = status;
    wc.opcode = op;
    wc.qp_num = qpn_;
    cq_.push_back({wc, op != IBV_WC_RECV});  // a receive frees no send queue entry
  }
  void execute(const Write& w) {
    if (!peer) {  // the peer's queue pair is gone: no ACK ever comes
      complete(w.wrId, IBV_WC_RETRY_EXC_ERR);
      broken_ = true;
      return;
    }
    if (cut_ || peer->broken_) {  // no ACK comes over a cut wire or from a QP in error
      complete(w.wrId, IBV_WC_RETRY_EXC_ERR);
      toError();
      return;
    }
    if (!w.bytes.empty()) {
      if (!nic_->covers(w.rkey, w.addr, w.bytes.size())) {
        faults.push_back("remote key/range refused");
      } else {
        std::memcpy(reinterpret_cast<void*>(w.addr), w.bytes.data(), w.bytes.size());
      }
    }
    if (w.imm >> 24 == static_cast<std::uint32_t>(ImmKind::kData)) ++dataWrites;
    if (peer->recvs_.empty()) {
      faults.push_back("receiver not ready: no receive posted");
    } else {
      ibv_wc rc{};
      rc.wr_id = peer->recvs_.front();
      peer->recvs_.pop_front();
      rc.status = IBV_WC_SUCCESS;
      rc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
      rc.wc_flags = IBV_WC_WITH_IMM;
      rc.imm_data = htonl(w.imm);
      rc.byte_len = static_cast<std::uint32_t>(w.bytes.size());
      peer->cq_.push_back({rc, false});
    }
    complete(w.wrId, IBV_WC_SUCCESS);
  }

  FakeNic* nic_;
  std::uint32_t qpn_;
  bool broken_ = false;
  bool cut_ = false;
  std::uint32_t sendQueueUsed_ = 0;
  std::deque<Write> pending_;
  std::deque<std::uint64_t> recvs_;
  std::deque<std::pair<ibv_wc, bool>> cq_;  // bool: a send completion
};

// Bytes that differ at every offset and per seed (a misplaced chunk shows).
inline std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 131 + seed + (i >> 12));
  return v;
}

// The int32 sum a Reduction applies (dst = a + b).
inline void sumInt32(void* dst, const void* a, const void* b, std::size_t bytes, const void*) {
  auto* d = static_cast<std::int32_t*>(dst);
  const auto* x = static_cast<const std::int32_t*>(a);
  const auto* y = static_cast<const std::int32_t*>(b);
  for (std::size_t i = 0; i < bytes / 4; ++i) d[i] = x[i] + y[i];
}

// Makes a rejoin's queue pairs on the fake NIC; connect() joins a pair by number.
class FakeQpMaker : public QpMaker {
 public:
  explicit FakeQpMaker(FakeNic* nic) : nic_(nic) {}
  Status make(std::unique_ptr<QueuePair>* qp, std::uint32_t* psn) override {
    auto made = std::make_unique<FakeQueuePair>(nic_, nic_->nextQpn++);
    COHORT_RETURN_IF_ERROR(postInitialReceives(*made));
    *psn = made->qpNumber() * 7;
    *qp = std::move(made);
    return Status::Ok();
  }
  Status connect(QueuePair& qp, std::uint32_t psn, std::uint32_t peerQpn,
                 std::uint32_t peerPsn) override {
    auto it = nic_->qps.find(peerQpn);
    if (it == nic_->qps.end() || peerPsn != peerQpn * 7 || psn != qp.qpNumber() * 7) {
      return Status(ErrorCode::kConnectionError, "fake: no such queue pair to connect to");
    }
    auto& mine = static_cast<FakeQueuePair&>(qp);
    mine.peer = it->second;
    it->second->peer = &mine;
    return Status::Ok();
  }

 private:
  FakeNic* nic_;
};

// Two connected ranks over fake queue pairs: conn[0] is rank 0, conn[1] rank 1.
// qp[] are the first queue pairs (a rejoin replaces them).
struct FakePair {
  FakeNic nic;
  std::shared_ptr<FakeRegistrar> registrar = std::make_shared<FakeRegistrar>(&nic);
  std::shared_ptr<RegistrationCache> cache = std::make_shared<RegistrationCache>(registrar, 16);
  FakeQueuePair* qp[2] = {nullptr, nullptr};
  std::unique_ptr<RdmaConnection> conn[2];

  using Resilience = std::function<std::unique_ptr<RdmaResilience>(int rank, FakeNic* nic)>;
  explicit FakePair(bool start = true, const Resilience& resilience = nullptr) {
    RdmaBuffers buffers[2];
    std::unique_ptr<FakeQueuePair> qps[2];
    for (int i = 0; i < 2; ++i) {
      qps[i] = std::make_unique<FakeQueuePair>(&nic, 0x10 + i);
      qp[i] = qps[i].get();
      EXPECT_OK(RegisteredBuffer::create(registrar, RdmaBuffers::ringBytes(), kQpAccess,
                                         &buffers[i].ring));
      EXPECT_OK(RegisteredBuffer::create(registrar, RdmaBuffers::sendAreaBytes(), 1,
                                         &buffers[i].sendArea));
      EXPECT_OK(postInitialReceives(*qps[i]));
    }
    qp[0]->peer = qp[1];
    qp[1]->peer = qp[0];
    RdmaLink links[2];
    for (int i = 0; i < 2; ++i) {
      const MemoryRegion& peerRing = buffers[1 - i].ring->region();
      links[i] = RdmaLink{i,
                          1 - i,
                          fmt::format("rank {} fake qpn 0x{:x}", i, 0x10 + i),
                          fmt::format("rank {} fake qpn 0x{:x}", 1 - i, 0x11 - i),
                          reinterpret_cast<std::uintptr_t>(peerRing.addr),
                          peerRing.rkey,
                          kRingSlots,
                          static_cast<std::uint32_t>(kSlotStride)};
    }
    for (int i = 0; i < 2; ++i) {
      conn[i] = std::make_unique<RdmaConnection>(links[i], std::move(qps[i]), std::move(buffers[i]),
                                                 cache, resilience ? resilience(i, &nic) : nullptr);
    }
    if (start) {
      EXPECT_OK(conn[0]->start());
      EXPECT_OK(conn[1]->start());
    }
  }

  // Progresses both ends until both are idle; the first error wins.
  Status pump(int maxRounds = 100000) {
    for (int round = 0; round < maxRounds; ++round) {
      bool idle = true;
      for (auto& c : conn) {
        if (!c) continue;
        COHORT_RETURN_IF_ERROR(c->progress());
        idle = idle && c->idle();
      }
      if (idle) return Status::Ok();
    }
    return Status(ErrorCode::kTimeout, "fake pair not idle");
  }

  std::string faults() const {
    std::string out;
    for (const auto& f : nic.retiredFaults) out += f + "; ";
    for (const auto& [qpn, q] : nic.qps) {
      for (const auto& f : q->faults) out += f + "; ";
    }
    return out;
  }
};

}  // namespace cohort::transport::rdma::fake
