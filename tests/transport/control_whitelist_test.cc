// COHORT_WHITELIST_FILE: this binary runs with it pointing at a file the test
// writes before starting each server (the server reads it at start). The steps
// share that one file, so they are one test (ctest may run tests in parallel).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "common/config.h"
#include "test_util.h"
#include "transport/control/whitelist.h"
#include "transport/tcp_store.h"

namespace cohort::transport {
namespace {

using namespace std::chrono_literals;

const JobToken kToken = JobToken::fromText("control-whitelist-test");

void writeWhitelist(const std::string& text) {
  const std::string& path = Config::global().whitelistFile;
  ASSERT_FALSE(path.empty()) << "COHORT_WHITELIST_FILE must be set for this test";
  std::ofstream(path) << text;
}

std::shared_ptr<TcpStoreServer> startServer() {
  StoreServerOptions options;
  options.token = kToken;
  std::shared_ptr<TcpStoreServer> server;
  const Status s = TcpStoreServer::start(options, &server);
  EXPECT_TRUE(s.ok()) << s.toString();
  return server;
}

TEST(ControlWhitelistTest, RefusesUnlistedAddressesAndServesListedOnes) {
  writeWhitelist("# only a machine that is not this one\n10.255.255.1   # rank 0\n\n");
  auto server = startServer();
  ASSERT_TRUE(server);
  std::shared_ptr<Store> store;
  const Status s =
      connectTcpStore("127.0.0.1", server->port(), kToken, 1, Deadline::after(5s), &store);
  EXPECT_ERROR(s, kConnectionError, "address 127.0.0.1 is not in the whitelist");
  EXPECT_NE(s.message().find(Config::global().whitelistFile), std::string::npos) << s.message();
  const auto end = Clock::now() + 5s;
  while (server->refusedCount() < 1 && Clock::now() < end) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(server->refusedCount(), 1);

  // Listed: served.
  writeWhitelist("10.255.255.1\n127.0.0.1\n");
  server = startServer();
  ASSERT_TRUE(server);
  ASSERT_OK(connectTcpStore("127.0.0.1", server->port(), kToken, 1, Deadline::after(5s), &store));
  ASSERT_OK(store->set("k", Bytes{4}));
  bool exists = false;
  ASSERT_OK(store->check("k", &exists));
  EXPECT_TRUE(exists);
  EXPECT_EQ(server->refusedCount(), 0);

  // A file that is not a list of addresses stops the server from starting.
  writeWhitelist("127.0.0.1\nnode-3\n");
  std::shared_ptr<TcpStoreServer> none;
  EXPECT_ERROR(TcpStoreServer::start(StoreServerOptions(), &none), kConfigError,
               Config::global().whitelistFile + ":2: 'node-3' is not an IP address");
  EXPECT_FALSE(none);
}

TEST(ControlWhitelistTest, ParsingRules) {
  control::Whitelist w;
  ASSERT_OK(control::Whitelist::parse(" 10.0.0.1 \n# c\n\tfd00:0::1 # v6\r\n", "list", &w));
  EXPECT_TRUE(w.enabled());
  EXPECT_TRUE(w.allows("10.0.0.1"));
  EXPECT_TRUE(w.allows("::ffff:10.0.0.1"));  // IPv4-mapped form of a listed address
  EXPECT_TRUE(w.allows("fd00::1"));
  EXPECT_FALSE(w.allows("10.0.0.2"));
  EXPECT_FALSE(w.allows("garbage"));
  EXPECT_TRUE(control::Whitelist().allows("10.0.0.2"));  // no file: everyone
  EXPECT_ERROR(control::Whitelist::parse("# nothing\n\n", "empty.txt", &w), kConfigError,
               "empty.txt: lists no address");
  EXPECT_ERROR(control::Whitelist::load("/nonexistent/cohort/whitelist", &w), kConfigError,
               "/nonexistent/cohort/whitelist: cannot read");
}

}  // namespace
}  // namespace cohort::transport
