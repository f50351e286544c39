// One bad table per rule: each must fail with exactly that one error, at exactly
// that location, showing the value found.
#include <cctype>
#include <ostream>
#include <set>

#include "tests/ranktable/ranktable_test_util.h"

namespace cohort::ranktable {
namespace {

using test::dataPath;
using test::describe;

struct BadCase {
  const char* file;
  Rule rule;
  const char* pointer;
  int line;  // 0 for JSON values
  int column;
  const char* found;
  ErrorCode code = ErrorCode::kValidationError;
  Profile profile = Profile::kDefault;
  int ownRank = -1;
};

const BadCase kCases[] = {
    {"bad_syntax.json", Rule::kSyntax, "", 8, 5,
     "syntax error while parsing value - unexpected ']'", ErrorCode::kParseError},
    {"bad_missing_key.json", Rule::kMissingKey, "/server_list/1/device/1/rank_id", 0, 0,
     "(missing)"},
    {"bad_missing_version.json", Rule::kMissingKey, "/version", 0, 0, "(missing)"},
    {"bad_missing_super_device_id.json", Rule::kMissingKey,
     "/server_list/1/device/1/super_device_id", 0, 0, "(missing)"},
    {"bad_legacy_missing_group_count.json", Rule::kMissingKey, "/group_count", 0, 0, "(missing)"},
    {"bad_wrong_type.json", Rule::kWrongType, "/server_list/1/device", 0, 0, "an object"},
    {"bad_wrong_value_type.json", Rule::kWrongType, "/server_list/0/device/0/device_ip", 0, 0,
     "an array"},
    {"bad_unknown_version.json", Rule::kUnknownVersion, "/version", 0, 0, "\"1.1\""},
    {"bad_status.json", Rule::kBadStatus, "/status", 0, 0, "\"done\""},
    {"bad_count.json", Rule::kBadCount, "/server_count", 0, 0, "\"two\""},
    {"bad_count_mismatch.json", Rule::kCountMismatch, "/server_count", 0, 0, "\"3\""},
    {"bad_legacy_instance_count.json", Rule::kCountMismatch, "/group_list/0/instance_count", 0, 0,
     "\"2\""},
    {"bad_legacy_device_count.json", Rule::kCountMismatch, "/group_list/0/device_count", 0, 0,
     "\"8\""},
    {"bad_empty_server_list.json", Rule::kEmptyServerList, "/server_list", 0, 0, "an empty list"},
    {"bad_empty_super_pod.json", Rule::kEmptyServerList, "/super_pod_list/1/server_list", 0, 0,
     "an empty list"},
    {"bad_empty_device_list.json", Rule::kEmptyDeviceList, "/server_list/1/device", 0, 0,
     "an empty list"},
    {"bad_empty_server_id.json", Rule::kEmptyServerId, "/server_list/1/server_id", 0, 0, "\"\""},
    {"bad_server_id_too_long.json", Rule::kServerIdTooLong, "/server_list/1/server_id", 0, 0,
     "\"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\""},
    {"bad_characters.json", Rule::kBadCharacters, "/server_list/1/server_id", 0, 0,
     "\"node-\\x01\""},
    {"bad_duplicate_server_id.json", Rule::kDuplicateServerId, "/server_list/1/server_id", 0, 0,
     "\"node-0\""},
    {"bad_duplicate_pod_name.json", Rule::kDuplicatePodName,
     "/group_list/0/instance_list/2/pod_name", 0, 0, "\"pod-a\""},
    {"bad_device_id.json", Rule::kBadDeviceId, "/server_list/0/device/1/device_id", 0, 0,
     "\"one\""},
    {"bad_duplicate_device_id.json", Rule::kDuplicateDeviceId, "/server_list/0/device/1/device_id",
     0, 0, "\"0\""},
    {"bad_rank_id.json", Rule::kBadRankId, "/server_list/1/device/0/rank_id", 0, 0, "\"-2\""},
    {"bad_duplicate_rank_id.json", Rule::kDuplicateRankId, "/server_list/1/device/1/rank_id", 0, 0,
     "\"2\""},
    {"bad_rank_id_out_of_range.json", Rule::kRankIdOutOfRange, "/server_list/1/device/1/rank_id", 0,
     0, "\"4\""},
    {"bad_ranks_not_contiguous.json", Rule::kRanksNotContiguous, "/server_list/0/device/1/rank_id",
     0, 0, "\"3\""},
    {"bad_legacy_interleaved.json", Rule::kRanksNotContiguous,
     "/group_list/0/instance_list/2/devices/0", 0, 0, "\"5\""},
    {"bad_ip.json", Rule::kBadIp, "/server_list/1/device/0/device_ip", 0, 0, "\"-.-.-.-\""},
    {"bad_host_ip.json", Rule::kBadIp, "/server_list/1/host_ip", 0, 0, "\"10.0.0.256\""},
    {"bad_duplicate_ip.json", Rule::kDuplicateIp, "/server_list/1/device/0/device_ip", 0, 0,
     "\"192.168.1.1\""},
    {"bad_mixed_ip_family.json", Rule::kMixedIpFamily, "/server_list/1/device/1/device_ip", 0, 0,
     "\"fd00::4\" (IPv6)"},
    {"bad_port.json", Rule::kBadPort, "/server_list/0/device/1/device_port", 0, 0, "\"70000\""},
    {"bad_duplicate_port.json", Rule::kDuplicatePort, "/server_list/0/device/1/host_port", 0, 0,
     "\"60000\""},
    {"bad_transport.json", Rule::kBadTransport, "/server_list/0/net_protocol", 0, 0, "\"udp\""},
    {"bad_empty_super_pod_id.json", Rule::kEmptySuperPodId, "/super_pod_list/0/super_pod_id", 0, 0,
     "\"\""},
    {"bad_duplicate_super_pod_id.json", Rule::kDuplicateSuperPodId,
     "/super_pod_list/1/super_pod_id", 0, 0, "\"0\""},
    {"bad_unknown_super_pod_server.json", Rule::kUnknownSuperPodServer,
     "/super_pod_list/0/server_list/1/server_id", 0, 0, "\"node-9\""},
    {"bad_duplicate_super_pod_server.json", Rule::kDuplicateSuperPodServer,
     "/super_pod_list/1/server_list/0/server_id", 0, 0, "\"node-1\""},
    {"bad_super_pod_not_contiguous.json", Rule::kSuperPodNotContiguous,
     "/super_pod_list/0/server_list/1/server_id", 0, 0, "\"node-2\""},
    {"bad_super_device_id.json", Rule::kBadSuperDeviceId, "/server_list/1/device/0/super_device_id",
     0, 0, "\"x\""},
    {"bad_duplicate_super_device_id.json", Rule::kDuplicateSuperDeviceId,
     "/server_list/1/device/0/super_device_id", 0, 0, "\"0\""},
    {"bad_uneven_devices.json", Rule::kUnevenDevices, "/server_list/1/device", 0, 0, "1 device"},
    // Valid by default; the 910 profile wants 1, 2, 4, 8 or 16 devices per server.
    {"good_three_devices.json", Rule::kBadDevicesPerServer, "/server_list/0/device", 0, 0,
     "3 devices", ErrorCode::kValidationError, Profile::k910},
    {"good_v1_0.json", Rule::kRankNotInTable, "", 0, 0, "rank 4", ErrorCode::kValidationError,
     Profile::kDefault, 4},
    // YAML: locations carry line:column.
    {"bad_syntax.yaml", Rule::kSyntax, "", 4, 3, "illegal block entry", ErrorCode::kParseError},
    {"bad_control_character.yaml", Rule::kSyntax, "", 2, 13, "character U+0007",
     ErrorCode::kParseError},
    {"bad_characters.yaml", Rule::kBadCharacters, "/servers/0/super_pod", 3, 16, "\"pod\\x07\""},
    {"bad_not_a_map.yaml", Rule::kWrongType, "", 1, 1, "a sequence"},
    {"bad_wrong_type.yaml", Rule::kWrongType, "/servers/0/devices", 3, 14, "a scalar"},
    {"bad_missing_rank.yaml", Rule::kMissingKey, "/servers/0/devices/1/rank", 5, 9, "(missing)"},
    {"bad_unknown_version.yaml", Rule::kUnknownVersion, "/version", 1, 10, "\"2.0\""},
    {"bad_duplicate_rank_id.yaml", Rule::kDuplicateRankId, "/servers/0/devices/1/rank", 7, 15,
     "\"0\""},
    {"bad_ip.yaml", Rule::kBadIp, "/servers/0/host_ip", 3, 14, "\"localhost\""},
    {"bad_transport.yaml", Rule::kBadTransport, "/servers/0/transport", 3, 16, "\"infiniband\""},
    {"bad_super_pod_not_contiguous.yaml", Rule::kSuperPodNotContiguous, "/servers/2/super_pod", 9,
     16, "\"c\""},
};

// ctest shows the parameter: print the file, not the struct's bytes.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

class BadTableTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadTableTest, ReportsExactlyTheBrokenRuleAndWhere) {
  const BadCase& c = GetParam();
  LoadOptions options = test::quietOptions();
  options.profile = c.profile;
  options.ownRank = c.ownRank;
  ClusterSpec spec;
  spec.version = "untouched";
  Diagnostics diagnostics;
  const Status status = loadClusterFile(dataPath(c.file), options, &spec, &diagnostics);
  EXPECT_EQ(status.code(), c.code) << status.toString();
  EXPECT_EQ(spec.version, "untouched") << "a failed load must not touch the spec";
  const std::vector<Diagnostic> errors = diagnostics.errors();
  ASSERT_EQ(errors.size(), 1u) << describe(diagnostics);
  const Diagnostic& e = errors[0];
  EXPECT_STREQ(ruleName(e.rule), ruleName(c.rule)) << e.toString();
  EXPECT_EQ(e.location.pointer, c.pointer) << e.toString();
  EXPECT_EQ(e.location.line, c.line) << e.toString();
  EXPECT_EQ(e.location.column, c.column) << e.toString();
  EXPECT_EQ(e.found, c.found) << e.toString();
  EXPECT_FALSE(e.expected.empty());
  // The status message names the file and carries the diagnostic.
  EXPECT_NE(status.message().find(c.file), std::string::npos);
  EXPECT_NE(status.message().find(e.toString()), std::string::npos) << status.message();
}

std::string caseName(const ::testing::TestParamInfo<BadCase>& info) {
  std::string name = info.param.file;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  if (info.param.profile != Profile::kDefault) name += "_profile_910";
  if (info.param.ownRank >= 0) name += "_own_rank";
  return name;
}

INSTANTIATE_TEST_SUITE_P(Files, BadTableTest, ::testing::ValuesIn(kCases), caseName);

// Every error rule has a failing table above (the rest are tested elsewhere).
TEST(BadTableCoverage, EveryErrorRuleHasABadTable) {
  std::set<Rule> covered;
  for (const BadCase& c : kCases) covered.insert(c.rule);
  const std::set<Rule> elsewhere = {Rule::kUnreadable, Rule::kStatusInitializing,
                                    Rule::kNumberValue, Rule::kUnknownKey, Rule::kIgnoredKey};
  for (int r = 0; r <= static_cast<int>(Rule::kRankNotInTable); ++r) {
    const Rule rule = static_cast<Rule>(r);
    if (elsewhere.count(rule) > 0) continue;
    EXPECT_EQ(covered.count(rule), 1u) << "no bad table for " << ruleName(rule);
  }
}

// Several problems in one file are all reported, in document order per check.
TEST(BadTable, ReportsEveryProblemAtOnce) {
  Diagnostics diagnostics;
  ClusterSpec spec;
  const Status status =
      loadClusterFile(dataPath("bad_many.json"), test::quietOptions(), &spec, &diagnostics);
  EXPECT_EQ(status.code(), ErrorCode::kValidationError);
  const std::vector<Diagnostic> errors = diagnostics.errors();
  ASSERT_EQ(errors.size(), 4u) << describe(diagnostics);
  EXPECT_EQ(errors[0].rule, Rule::kEmptyServerId);
  EXPECT_EQ(errors[0].location.pointer, "/server_list/0/server_id");
  EXPECT_EQ(errors[1].rule, Rule::kBadPort);
  EXPECT_EQ(errors[1].location.pointer, "/server_list/0/device/0/device_port");
  EXPECT_EQ(errors[2].rule, Rule::kDuplicateIp);
  EXPECT_EQ(errors[2].location.pointer, "/server_list/0/device/1/device_ip");
  EXPECT_NE(errors[2].expected.find("/server_list/0/device/0/device_ip"), std::string::npos);
  EXPECT_EQ(errors[3].rule, Rule::kDuplicateRankId);
  EXPECT_EQ(errors[3].location.pointer, "/server_list/1/device/0/rank_id");
  EXPECT_NE(errors[3].expected.find("/server_list/0/device/1/rank_id"), std::string::npos);
  EXPECT_NE(status.message().find("4 errors"), std::string::npos);
}

}  // namespace
}  // namespace cohort::ranktable
