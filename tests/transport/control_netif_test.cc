// Interface selection rules over synthetic interface lists, and the real list.
#include <gtest/gtest.h>

#include "test_util.h"
#include "transport/netif.h"

namespace cohort::transport {
namespace {

const std::vector<NetInterface> kHost = {
    {"lo", "127.0.0.1", false, true},        {"lo", "::1", true, true},
    {"docker0", "172.17.0.1", false, false}, {"eth0", "10.0.0.2", false, false},
    {"eth1", "10.0.1.2", false, false},      {"eth10", "10.0.10.2", false, false},
    {"enp3s0", "192.168.1.5", false, false}, {"ib0", "fd00::5", true, false},
};

std::string pick(const std::vector<NetInterface>& list, const std::string& ip,
                 const std::string& ifname) {
  NetInterface out;
  const Status s = chooseInterface(list, ip, ifname, &out);
  EXPECT_TRUE(s.ok()) << s.toString();
  return out.name + " " + out.address;
}

TEST(ControlNetifTest, PrefixExcludeAndExactRules) {
  EXPECT_EQ(pick(kHost, "", "eth"), "eth0 10.0.0.2");
  EXPECT_EQ(pick(kHost, "", "enp,eth"), "eth0 10.0.0.2");  // first match in host order
  EXPECT_EQ(pick(kHost, "", "enp"), "enp3s0 192.168.1.5");
  EXPECT_EQ(pick(kHost, "", "^docker,eth"), "enp3s0 192.168.1.5");
  EXPECT_EQ(pick(kHost, "", "=eth1"), "eth1 10.0.1.2");
  EXPECT_EQ(pick(kHost, "", "=eth10"), "eth10 10.0.10.2");
  EXPECT_EQ(pick(kHost, "", "^=docker0"), "eth0 10.0.0.2");
  EXPECT_EQ(pick(kHost, "", "^=docker0,eth0,eth1"), "eth10 10.0.10.2");
  EXPECT_EQ(pick(kHost, "", "ib"), "ib0 fd00::5");
  EXPECT_EQ(pick(kHost, "", "lo"), "lo 127.0.0.1");
  EXPECT_EQ(pick(kHost, "", " eth1 , enp "), "eth1 10.0.1.2");  // spaces ignored
}

TEST(ControlNetifTest, IfIpWinsOverIfname) {
  EXPECT_EQ(pick(kHost, "192.168.1.5", "eth"), "enp3s0 192.168.1.5");
  EXPECT_EQ(pick(kHost, "127.0.0.1", ""), "lo 127.0.0.1");
  EXPECT_EQ(pick(kHost, "fd00:0::5", ""), "ib0 fd00::5");  // compared in canonical form
}

TEST(ControlNetifTest, FallbackToFirstNonLoopbackThenLoopback) {
  EXPECT_EQ(pick(kHost, "", ""), "docker0 172.17.0.1");
  const std::vector<NetInterface> v6First = {{"lo", "127.0.0.1", false, true},
                                             {"ib0", "fd00::5", true, false},
                                             {"eth0", "10.0.0.2", false, false}};
  EXPECT_EQ(pick(v6First, "", ""), "eth0 10.0.0.2");  // IPv4 preferred
  const std::vector<NetInterface> loopbackOnly = {{"lo", "::1", true, true},
                                                  {"lo", "127.0.0.1", false, true}};
  EXPECT_EQ(pick(loopbackOnly, "", ""), "lo 127.0.0.1");
}

TEST(ControlNetifTest, ErrorsNameTheVariableAndTheInterfaces) {
  NetInterface out;
  EXPECT_ERROR(chooseInterface(kHost, "10.9.9.9", "", &out), kConfigError,
               "COHORT_IF_IP=10.9.9.9 is not an address of any interface");
  const Status s = chooseInterface(kHost, "10.9.9.9", "", &out);
  EXPECT_NE(s.message().find("eth0 10.0.0.2"), std::string::npos) << s.message();
  EXPECT_ERROR(chooseInterface(kHost, "eth0", "", &out), kConfigError, "not an IP address");
  EXPECT_ERROR(chooseInterface(kHost, "", "wlan", &out), kConfigError,
               "COHORT_SOCKET_IFNAME=wlan matches no interface");
  EXPECT_ERROR(chooseInterface(kHost, "", "=eth", &out), kConfigError, "matches no interface");
  EXPECT_ERROR(chooseInterface(kHost, "", "^", &out), kConfigError, "names no interface");
  EXPECT_ERROR(chooseInterface({}, "", "", &out), kUnavailable, "no network interface");
}

TEST(ControlNetifTest, ThisHostHasLoopback) {
  std::vector<NetInterface> all;
  ASSERT_OK(listInterfaces(&all));
  bool loopback = false;
  for (const auto& i : all) {
    loopback = loopback || (i.loopback && i.address == "127.0.0.1");
    EXPECT_FALSE(i.address.rfind("fe80", 0) == 0) << "link-local listed: " << i.address;
  }
  EXPECT_TRUE(loopback);
  NetInterface lo;
  ASSERT_OK(chooseInterface(all, "127.0.0.1", "", &lo));
  EXPECT_TRUE(lo.loopback);
}

}  // namespace
}  // namespace cohort::transport
