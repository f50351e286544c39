// connectJobStore on loopback: through a root info, and through a master address
// where rank 0 serves the store. This binary runs with COHORT_IF_IP=127.0.0.1.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "test_util.h"
#include "transport/jobenv/job_env.h"

namespace cohort::transport {
namespace {

// Listens on 127.0.0.1 on an ephemeral port until destroyed.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 1);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

int freePort() { return Listener().port(); }

JobEnvironment masterJob(int rank, int size, const std::string& addr, int port,
                         const std::string& token) {
  JobEnvironment job;
  job.rank = rank;
  job.size = size;
  job.source = "torchrun/env";
  job.masterAddr = addr;
  job.masterPort = port;
  job.jobToken = token;
  return job;
}

Deadline soon() { return Deadline::afterMs(10000); }

TEST(JobStoreTest, ThroughARootInfoEveryRankIsAClient) {
  RootInfo info;
  std::shared_ptr<TcpStoreServer> root;
  ASSERT_OK(createRoot(&info, &root));
  std::shared_ptr<Store> stores[2];
  for (int rank = 0; rank < 2; ++rank) {
    JobEnvironment job;
    job.rank = rank;
    job.size = 2;
    job.rootInfo = info;
    JobToken token;
    std::shared_ptr<TcpStoreServer> server;
    ASSERT_OK(connectJobStore(job, soon(), &stores[rank], &token, &server));
    EXPECT_EQ(token, info.token);
    EXPECT_EQ(server, nullptr) << "the root info's server is someone else's";
  }
  ASSERT_OK(stores[0]->set("k", {7}));
  Bytes value;
  ASSERT_OK(stores[1]->get("k", &value, soon()));
  EXPECT_EQ(value, Bytes{7});
}

TEST(JobStoreTest, ThroughAMasterAddressRankZeroServes) {
  const int port = freePort();
  std::shared_ptr<Store> store1;
  JobToken token1;
  Status status1;
  // Rank 1 starts first: it retries until rank 0 serves.
  std::thread rank1([&] {
    std::shared_ptr<TcpStoreServer> server;
    status1 = connectJobStore(masterJob(1, 2, "127.0.0.1", port, "secret"), soon(), &store1,
                              &token1, &server);
    EXPECT_EQ(server, nullptr);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::shared_ptr<Store> store0;
  JobToken token0;
  std::shared_ptr<TcpStoreServer> server0;
  ASSERT_OK(connectJobStore(masterJob(0, 2, "127.0.0.1", port, "secret"), soon(), &store0, &token0,
                            &server0));
  rank1.join();
  ASSERT_OK(status1);
  ASSERT_NE(server0, nullptr);
  EXPECT_EQ(server0->port(), port);
  EXPECT_EQ(server0->address(), "127.0.0.1");
  EXPECT_EQ(token0, JobToken::fromText("secret"));
  EXPECT_EQ(token1, token0);
  std::int64_t total = 0;
  ASSERT_OK(store0->add("n", 1, &total));
  ASSERT_OK(store1->add("n", 1, &total));
  EXPECT_EQ(total, 2);
}

TEST(JobStoreTest, WithoutJobTokenTheTokenIsAHashOfTheAddress) {
  bool hashed = false;
  const JobToken t = masterJobToken("", "10.0.0.1", 29500, 8, &hashed);
  EXPECT_TRUE(hashed);
  EXPECT_EQ(t, JobToken::fromText("10.0.0.1:29500/8"));
  EXPECT_NE(t, masterJobToken("", "10.0.0.1", 29500, 4, &hashed)) << "world size is part of it";
  EXPECT_EQ(masterJobToken("secret", "10.0.0.1", 29500, 8, &hashed), JobToken::fromText("secret"));
  EXPECT_FALSE(hashed);

  const int port = freePort();
  std::shared_ptr<Store> store;
  JobToken token;
  std::shared_ptr<TcpStoreServer> server;
  ASSERT_OK(
      connectJobStore(masterJob(0, 1, "127.0.0.1", port, ""), soon(), &store, &token, &server));
  EXPECT_EQ(token, JobToken::fromText("127.0.0.1:" + std::to_string(port) + "/1"));
}

TEST(JobStoreTest, AHostNameIsResolvedForTheServer) {
  const int port = freePort();
  std::shared_ptr<Store> store;
  JobToken token;
  std::shared_ptr<TcpStoreServer> server;
  ASSERT_OK(
      connectJobStore(masterJob(0, 1, "localhost", port, "t"), soon(), &store, &token, &server));
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->address(), "127.0.0.1");
  ASSERT_OK(store->set("k", {1}));
}

TEST(JobStoreTest, ARankWithTheWrongTokenIsRefused) {
  const int port = freePort();
  std::shared_ptr<Store> store0, store1;
  JobToken token;
  std::shared_ptr<TcpStoreServer> server0, server1;
  ASSERT_OK(connectJobStore(masterJob(0, 2, "127.0.0.1", port, "right"), soon(), &store0, &token,
                            &server0));
  const Status s = connectJobStore(masterJob(1, 2, "127.0.0.1", port, "wrong"),
                                   Deadline::afterMs(2000), &store1, &token, &server1);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("127.0.0.1"), std::string::npos) << s.toString();
  EXPECT_GE(server0->refusedCount(), 1);
}

TEST(JobStoreTest, ErrorsNameTheAddress) {
  std::shared_ptr<Store> store;
  JobToken token;
  std::shared_ptr<TcpStoreServer> server;
  JobEnvironment none;
  none.rank = 1;
  none.size = 2;
  none.source = "openmpi";
  EXPECT_ERROR(connectJobStore(none, soon(), &store, &token, &server), kUnavailable,
               "rank 1 of 2 (openmpi): no store to join: neither COHORT_ROOT_INFO nor "
               "MASTER_ADDR/MASTER_PORT is set");

  Listener taken;
  EXPECT_ERROR(connectJobStore(masterJob(0, 2, "127.0.0.1", taken.port(), "t"), soon(), &store,
                               &token, &server),
               kUnavailable,
               "rank 0 of 2 (torchrun/env, MASTER_ADDR/MASTER_PORT): cannot serve the job store "
               "at 127.0.0.1:" +
                   std::to_string(taken.port()));
  EXPECT_ERROR(connectJobStore(masterJob(0, 2, "no-such-host.invalid", 29500, "t"), soon(), &store,
                               &token, &server),
               kConfigError, "host 'no-such-host.invalid' cannot be resolved");
  EXPECT_ERROR(startMasterStore("no-such-host.invalid", 29500, token, &server), kConfigError,
               "cannot be resolved");
}

}  // namespace
}  // namespace cohort::transport
