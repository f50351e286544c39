// The rdma connection's protocol (chunks, credits, READY, mismatch, close,
// reduction, error completions) over an in-memory queue pair that executes the
// same work requests a NIC would, with RC's guarantees and its refusals (bad
// keys, ranges, missing receives), so it runs without an RDMA device.
#include "transport/rdma/rdma_connection.h"

#include <arpa/inet.h>

#include <cstring>
#include <deque>
#include <map>
#include <numeric>
#include <set>

#include "cohort/runtime.h"
#include "common/error.h"
#include "test_util.h"
#include "transport/rdma/rdma_qp_attributes.h"

namespace cohort::transport::rdma {
namespace {

// The keys a NIC would know: lkey == rkey -> registered range.
struct FakeNic {
  std::map<std::uint32_t, std::pair<std::uintptr_t, std::size_t>> keys;
  std::uint32_t nextKey = 0x100;
  int registrations = 0;
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
  FakeQueuePair(FakeNic* nic, std::uint32_t qpn) : nic_(nic), qpn_(qpn) {}
  ~FakeQueuePair() override {
    if (peer) peer->peer = nullptr;
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

  // Executes the writes held back so far, in order.
  void deliver() {
    while (!pending_.empty()) {
      execute(pending_.front());
      pending_.pop_front();
    }
  }
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
  void complete(std::uint64_t wrId, ibv_wc_status status) {
    ibv_wc wc{};
    wc.wr_id = wrId;
    wc.status = status;
    wc.opcode = IBV_WC_RDMA_WRITE;
    wc.qp_num = qpn_;
    cq_.push_back({wc, true});
  }
  void execute(const Write& w) {
    if (!peer) {  // the peer's queue pair is gone: no ACK ever comes
      complete(w.wrId, IBV_WC_RETRY_EXC_ERR);
      broken_ = true;
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
  std::uint32_t sendQueueUsed_ = 0;
  std::deque<Write> pending_;
  std::deque<std::uint64_t> recvs_;
  std::deque<std::pair<ibv_wc, bool>> cq_;  // bool: a send completion
};

// Two connected ranks over fake queue pairs: conn[0] is rank 0, conn[1] rank 1.
struct FakePair {
  FakeNic nic;
  std::shared_ptr<FakeRegistrar> registrar = std::make_shared<FakeRegistrar>(&nic);
  std::shared_ptr<RegistrationCache> cache = std::make_shared<RegistrationCache>(registrar, 16);
  FakeQueuePair* qp[2] = {nullptr, nullptr};
  std::unique_ptr<RdmaConnection> conn[2];

  explicit FakePair(bool start = true) {
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
                                                 cache);
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
    for (auto* q : qp) {
      if (q) {
        for (const auto& f : q->faults) out += f + "; ";
      }
    }
    return out;
  }
};

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 131 + seed + (i >> 12));
  return v;
}

TEST(RdmaConnectionTest, ExactBytesBothDirectionsAtOnce) {
  FakePair p;
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, kSlotPayload,
                        kSlotPayload + 1, (std::size_t{1} << 20) + 3, std::size_t{5} << 20}) {
    SCOPED_TRACE(n);
    const auto a = pattern(n, 1), b = pattern(n, 2);
    std::vector<std::uint8_t> atB(n, 0xee), atA(n, 0xee);
    ASSERT_OK(p.conn[0]->postSend(a.data(), n));
    ASSERT_OK(p.conn[1]->postSend(b.data(), n));
    ASSERT_OK(p.conn[1]->postRecv(atB.data(), n));
    ASSERT_OK(p.conn[0]->postRecv(atA.data(), n));
    ASSERT_OK(p.pump());
    EXPECT_TRUE(atB == a);
    EXPECT_TRUE(atA == b);
  }
  EXPECT_EQ(p.conn[0]->sendsCompleted(), 7u);
  EXPECT_EQ(p.conn[1]->recvsCompleted(), 7u);
  EXPECT_EQ(p.faults(), "");
}

TEST(RdmaConnectionTest, ManyMessagesInFlightArriveInOrder) {
  FakePair p;
  constexpr int kCount = 200;
  std::vector<std::vector<std::uint8_t>> sent, received;
  for (int i = 0; i < kCount; ++i) {
    sent.push_back(
        pattern(static_cast<std::size_t>(i) * 977 % 150000, static_cast<std::uint8_t>(i)));
    received.emplace_back(sent.back().size());
  }
  for (int i = 0; i < kCount; ++i) ASSERT_OK(p.conn[0]->postSend(sent[i].data(), sent[i].size()));
  for (int i = 0; i < kCount; ++i) {
    ASSERT_OK(p.conn[1]->postRecv(received[i].data(), received[i].size()));
  }
  ASSERT_OK(p.pump());
  for (int i = 0; i < kCount; ++i) EXPECT_TRUE(received[i] == sent[i]) << "message " << i;
  EXPECT_EQ(p.conn[0]->sendsCompleted(), std::uint64_t{kCount});
  EXPECT_EQ(p.faults(), "");
}

TEST(RdmaConnectionTest, CreditsBoundTheWritesIntoThePeersRing) {
  FakePair p;
  const std::size_t n = 64 * kSlotPayload;
  const auto a = pattern(n, 3);
  std::vector<std::uint8_t> atB(n);
  ASSERT_OK(p.conn[0]->postSend(a.data(), n));
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK(p.conn[0]->progress());
    ASSERT_OK(p.conn[1]->progress());  // no receive posted: nothing consumed
  }
  EXPECT_EQ(p.qp[0]->dataWrites, static_cast<int>(kRingSlots));
  EXPECT_EQ(p.conn[0]->sendsCompleted(), 0u);
  ASSERT_OK(p.conn[1]->postRecv(atB.data(), n));
  ASSERT_OK(p.pump());
  EXPECT_EQ(p.qp[0]->dataWrites, 64);
  EXPECT_TRUE(atB == a);
  EXPECT_EQ(p.faults(), "");
}

TEST(RdmaConnectionTest, HeldWritesCompleteInOrder) {
  FakePair p;
  p.qp[0]->hold = true;  // writes stay "on the wire" until delivered
  const auto a = pattern(3 * kSlotPayload + 5, 4), b = pattern(10, 5);
  std::vector<std::uint8_t> ra(a.size()), rb(b.size());
  ASSERT_OK(p.conn[0]->postSend(a.data(), a.size()));
  ASSERT_OK(p.conn[0]->postSend(b.data(), b.size()));
  ASSERT_OK(p.conn[1]->postRecv(ra.data(), ra.size()));
  ASSERT_OK(p.conn[1]->postRecv(rb.data(), rb.size()));
  ASSERT_OK(p.conn[0]->progress());
  EXPECT_EQ(p.conn[0]->sendsCompleted(), 0u);
  EXPECT_EQ(p.conn[1]->recvsCompleted(), 0u);
  p.qp[0]->deliver();
  p.qp[0]->hold = false;
  ASSERT_OK(p.pump());
  EXPECT_TRUE(ra == a);
  EXPECT_TRUE(rb == b);
  EXPECT_EQ(p.faults(), "");
}

TEST(RdmaConnectionTest, DataWaitsForTheReadySignal) {
  FakePair p(/*start=*/false);
  const auto a = pattern(100, 6);
  std::vector<std::uint8_t> atB(100);
  ASSERT_OK(p.conn[0]->postSend(a.data(), a.size()));
  ASSERT_OK(p.conn[1]->postRecv(atB.data(), atB.size()));
  for (int i = 0; i < 10; ++i) ASSERT_OK(p.conn[0]->progress());
  EXPECT_EQ(p.qp[0]->dataWrites, 0);  // rank 1 has not said READY
  ASSERT_OK(p.conn[1]->start());
  ASSERT_OK(p.conn[0]->start());
  ASSERT_OK(p.pump());
  EXPECT_TRUE(atB == a);
  EXPECT_EQ(p.faults(), "");
}

void sumInt32(void* dst, const void* a, const void* b, std::size_t bytes, const void*) {
  auto* d = static_cast<std::int32_t*>(dst);
  const auto* x = static_cast<const std::int32_t*>(a);
  const auto* y = static_cast<const std::int32_t*>(b);
  for (std::size_t i = 0; i < bytes / 4; ++i) d[i] = x[i] + y[i];
}

TEST(RdmaConnectionTest, ReductionAccumulatesChunksIntoTheDestination) {
  FakePair p;
  constexpr std::size_t kCount = 300000;  // several chunks
  std::vector<std::int32_t> msg(kCount), acc(kCount), dst(kCount, -1), inPlace(kCount);
  std::iota(msg.begin(), msg.end(), 0);
  for (std::size_t i = 0; i < kCount; ++i) acc[i] = inPlace[i] = static_cast<std::int32_t>(2 * i);
  const Reduction sum{sumInt32, nullptr, 4};
  ASSERT_OK(p.conn[0]->postSend(msg.data(), kCount * 4));
  ASSERT_OK(p.conn[0]->postSend(msg.data(), kCount * 4));
  ASSERT_OK(p.conn[1]->postRecv(dst.data(), kCount * 4, &sum, acc.data()));
  ASSERT_OK(p.conn[1]->postRecv(inPlace.data(), kCount * 4, &sum));
  ASSERT_OK(p.pump());
  for (std::size_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(dst[i], static_cast<std::int32_t>(3 * i)) << i;
    ASSERT_EQ(inPlace[i], static_cast<std::int32_t>(3 * i)) << i;
  }
  EXPECT_EQ(acc[7], 14);  // the accumulate input is not written
}

TEST(RdmaConnectionTest, SizeMismatchFailsOnBothEnds) {
  FakePair p;
  std::vector<std::uint8_t> a(100), b(200);
  ASSERT_OK(p.conn[0]->postSend(a.data(), a.size()));
  Status s = p.conn[1]->postRecv(b.data(), b.size());  // may detect it at once
  if (s.ok()) s = p.pump();
  EXPECT_EQ(s.code(), ErrorCode::kMismatch) << s.toString();
  EXPECT_ERROR(p.conn[1]->progress(), kMismatch, "message 0 is 100 bytes but the receive posted");
  EXPECT_ERROR(p.conn[1]->progress(), kMismatch, "200 bytes");  // sticky
  EXPECT_ERROR(p.conn[1]->postRecv(b.data(), 1), kMismatch, "100 bytes");
  EXPECT_ERROR(p.conn[0]->progress(), kMismatch, "its receive was posted for 200 bytes");
  EXPECT_ERROR(p.conn[0]->postSend(a.data(), 1), kMismatch, "rank 1 fake qpn 0x11");
}

TEST(RdmaConnectionTest, ErrorCompletionIsStickyAndNamesBothEnds) {
  FakePair p;
  ASSERT_OK(p.pump());  // READY exchanged
  std::vector<std::uint8_t> a(1000);
  p.qp[0]->failNext = IBV_WC_RETRY_EXC_ERR;
  Status s = p.conn[0]->postSend(a.data(), a.size());
  if (s.ok()) s = p.conn[0]->progress();
  EXPECT_EQ(s.code(), ErrorCode::kRemoteError);
  for (const char* needle : {"rank 0 fake qpn 0x10", "rank 1 fake qpn 0x11",
                             "transport retry counter exceeded", "write of a data chunk"}) {
    EXPECT_NE(s.message().find(needle), std::string::npos) << needle << ": " << s.toString();
  }
  EXPECT_ERROR(p.conn[0]->progress(), kRemoteError, "transport retry counter exceeded");
  EXPECT_ERROR(p.conn[0]->postRecv(a.data(), 1), kRemoteError, "rank 1 fake qpn 0x11");
}

TEST(RdmaConnectionTest, ClosingTellsThePeer) {
  FakePair p;
  ASSERT_OK(p.pump());
  std::vector<std::uint8_t> buf(10);
  ASSERT_OK(p.conn[0]->postRecv(buf.data(), buf.size()));
  p.conn[1].reset();
  p.qp[1] = nullptr;
  EXPECT_ERROR(p.conn[0]->progress(), kRemoteError,
               "the peer closed the connection with 0 send(s) and 1 receive(s)");
  EXPECT_EQ(p.faults(), "");
}

TEST(RdmaConnectionTest, DataSentBeforeCloseIsStillDelivered) {
  FakePair p;
  const auto a = pattern(5000, 7);
  std::vector<std::uint8_t> atA(a.size());
  ASSERT_OK(p.conn[1]->postSend(a.data(), a.size()));
  ASSERT_OK(p.pump());
  p.conn[1].reset();
  p.qp[1] = nullptr;
  ASSERT_OK(p.conn[0]->postRecv(atA.data(), atA.size()));  // the bytes are in the ring
  ASSERT_OK(p.conn[0]->progress());
  EXPECT_TRUE(atA == a);
  EXPECT_ERROR(p.conn[0]->postSend(a.data(), 1), kRemoteError, "closed");
}

TEST(RdmaConnectionTest, DeviceMemoryIsRegisteredOnceAndSentInPlace) {
  ASSERT_OK(runtime::setDevice(0));
  FakePair p;
  const std::size_t n = (std::size_t{1} << 20) + 3;
  const auto host = pattern(n, 8);
  void* dev = nullptr;
  ASSERT_OK(runtime::deviceMalloc(&dev, n));
  ASSERT_OK(runtime::memcpy(dev, n, host.data(), n, runtime::MemcpyKind::kHostToDevice));
  std::vector<std::uint8_t> r1(n), r2(n), r3(n);
  ASSERT_OK(p.conn[0]->postSend(dev, n));
  ASSERT_OK(p.conn[0]->postSend(static_cast<std::uint8_t*>(dev) + 0, n));
  ASSERT_OK(p.conn[1]->postRecv(r1.data(), n));
  ASSERT_OK(p.conn[1]->postRecv(r2.data(), n));
  ASSERT_OK(p.pump());
  EXPECT_TRUE(r1 == host);
  EXPECT_TRUE(r2 == host);
  EXPECT_EQ(p.cache->registrations(), 1u);
  EXPECT_EQ(p.qp[0]->payloadKeys.size(), 1u);      // every chunk straight from the device buffer
  ASSERT_OK(p.conn[0]->postSend(host.data(), n));  // plain host memory: staged
  ASSERT_OK(p.conn[1]->postRecv(r3.data(), n));
  ASSERT_OK(p.pump());
  EXPECT_TRUE(r3 == host);
  EXPECT_EQ(p.cache->registrations(), 1u);
  EXPECT_EQ(p.qp[0]->payloadKeys.size(), 2u);
  runtime::PointerAttributes attributes;
  ASSERT_OK(runtime::pointerGetAttributes(dev, &attributes));
  EXPECT_ERROR(p.conn[0]->postSend(dev, attributes.allocationSize + 1), kInvalidArgument,
               "outside its allocation");
  EXPECT_EQ(p.faults(), "");
  ASSERT_OK(runtime::deviceFree(dev));
  ASSERT_OK(runtime::resetDevice(0));
}

TEST(RdmaConnectionTest, InvalidArgumentsLeaveTheConnectionUsable) {
  FakePair p;
  std::vector<std::uint8_t> buf(10);
  const Reduction sum{sumInt32, nullptr, 4};
  EXPECT_ERROR(p.conn[0]->postSend(nullptr, 5), kInvalidArgument, "null buffer");
  EXPECT_ERROR(p.conn[1]->postRecv(nullptr, 5), kInvalidArgument, "null buffer");
  EXPECT_ERROR(p.conn[1]->postRecv(buf.data(), 10, &sum), kInvalidArgument,
               "not a whole number of 4-byte elements");
  const auto a = pattern(10, 9);
  ASSERT_OK(p.conn[0]->postSend(a.data(), a.size()));
  ASSERT_OK(p.conn[1]->postRecv(buf.data(), buf.size()));
  ASSERT_OK(p.pump());
  EXPECT_TRUE(buf == a);
}

TEST(RdmaConnectionTest, GarbageSignalsAreProtocolErrors) {
  {
    FakePair p;
    p.qp[1]->inject(0xee000000);
    EXPECT_ERROR(p.conn[0]->progress(), kInternal, "unknown immediate 0xee000000");
  }
  {
    FakePair p;
    p.qp[1]->inject(encodeImm(ImmKind::kData, 5));
    EXPECT_ERROR(p.conn[0]->progress(), kInternal, "chunk 5 arrived where chunk 0 was expected");
  }
  {
    FakePair p;
    p.qp[1]->inject(encodeImm(ImmKind::kCredit, 1));
    EXPECT_ERROR(p.conn[0]->progress(), kInternal, "17 credits for a ring of 16 slots");
  }
}

TEST(RdmaConnectionTest, WaitHintDoesNotSleepOnQueuedCompletions) {
  FakePair p;
  ASSERT_OK(p.pump());
  const auto a = pattern(64, 10);
  std::vector<std::uint8_t> atB(64);
  ASSERT_OK(p.conn[0]->postSend(a.data(), a.size()));  // lands in rank 1's queue
  const WaitHint hint = p.conn[1]->waitHint();
  ASSERT_NE(hint.word, nullptr);
  EXPECT_NE(hint.word->snapshot(), hint.snapshot);  // sleep() would return at once
  ASSERT_OK(p.conn[1]->postRecv(atB.data(), atB.size()));
  ASSERT_OK(p.pump());
  EXPECT_TRUE(atB == a);
  const WaitHint idle = p.conn[1]->waitHint();  // nothing queued: the (fake's) fd
  EXPECT_EQ(idle.word, nullptr);
  EXPECT_EQ(idle.fd, -1);
}

}  // namespace
}  // namespace cohort::transport::rdma
