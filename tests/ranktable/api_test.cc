// The API around the files: diagnostics, the spec's helpers, and edge cases of
// values that are easiest to write inline.
#include <set>

#include "ranktable/ip_address.h"
#include "ranktable/text_util.h"
#include "tests/ranktable/ranktable_test_util.h"

namespace cohort::ranktable {
namespace {

using test::describe;

const char* kOneServer = R"({"status": "completed", "version": "1.0", "server_count": "1",
  "server_list": [{"server_id": "s", "device": [%s]}]})";

// A 1.0 table of one server whose device list is `devices`.
std::string oneServer(const std::string& devices) {
  std::string text = kOneServer;
  text.replace(text.find("%s"), 2, devices);
  return text;
}

Diagnostics parseJson(const std::string& text) {
  Diagnostics diagnostics;
  ClusterSpec spec;
  (void)parseRankTableJson(text, test::quietOptions(), &spec, &diagnostics);
  return diagnostics;
}

Diagnostics parseYaml(const std::string& text) {
  Diagnostics diagnostics;
  ClusterSpec spec;
  (void)parseClusterYaml(text, test::quietOptions(), &spec, &diagnostics);
  return diagnostics;
}

TEST(Diagnostics, RuleNamesAreDistinct) {
  std::set<std::string> names;
  for (int r = 0; r <= static_cast<int>(Rule::kRankNotInTable); ++r) {
    names.insert(ruleName(static_cast<Rule>(r)));
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(Rule::kRankNotInTable) + 1);
  EXPECT_EQ(names.count("unknown-rule"), 0u);
}

TEST(Diagnostics, TextShowsLocationRuleFoundAndExpected) {
  Diagnostic d{Severity::kError,
               Rule::kDuplicateRankId,
               {"/server_list/1/device/3/rank_id", 0, 0},
               "\"3\"",
               "a rank_id used once"};
  EXPECT_EQ(d.toString(),
            "/server_list/1/device/3/rank_id: duplicate-rank-id: found \"3\", expected a "
            "rank_id used once");
  d.location = Location{"/servers/0/id", 12, 7};
  d.severity = Severity::kWarning;
  EXPECT_EQ(d.toString().rfind("warning: 12:7 /servers/0/id: ", 0), 0u) << d.toString();
  EXPECT_EQ(Location{}.toString(), "(document)");
}

TEST(Diagnostics, StatusCodeFollowsTheWorstKindOfError) {
  Diagnostics d;
  EXPECT_TRUE(d.status("x").ok());
  d.warning(Rule::kNumberValue, Location{}, "1", "\"1\"");
  EXPECT_TRUE(d.status("x").ok()) << "warnings alone are fine";
  d.error(Rule::kBadPort, Location{"/p", 0, 0}, "\"0\"", "1..65535");
  EXPECT_EQ(d.status("x").code(), ErrorCode::kValidationError);
  d.error(Rule::kSyntax, Location{"", 1, 1}, "bad", "JSON");
  EXPECT_EQ(d.status("x").code(), ErrorCode::kParseError);
  EXPECT_NE(d.status("x").message().find("2 errors"), std::string::npos);
}

TEST(Profiles, ParseByName) {
  Profile p = Profile::kDefault;
  EXPECT_TRUE(parseProfile("910", &p));
  EXPECT_EQ(p, Profile::k910);
  EXPECT_TRUE(parseProfile("default", &p));
  EXPECT_EQ(p, Profile::kDefault);
  EXPECT_FALSE(parseProfile("910B", &p));
}

TEST(IpAddress, StrictParsing) {
  IpAddress a;
  EXPECT_TRUE(parseIp("10.0.0.1", &a));
  EXPECT_EQ(a.family, IpFamily::kV4);
  EXPECT_TRUE(parseIp("fe80::1", &a));
  EXPECT_EQ(a.family, IpFamily::kV6);
  for (const char* bad : {"", "-.-.-.-", "10.0.0", "10.0.0.1.", "010.0.0.1", "10.0.0.1 ",
                          "fe80::1%eth0", "localhost"}) {
    EXPECT_FALSE(parseIp(bad, &a)) << bad;
  }
  EXPECT_FALSE(parseIp(std::string("10.0.0.1\0x", 10), &a)) << "embedded NUL";
  IpAddress b;
  ASSERT_TRUE(parseIp("fe80:0:0::1", &b));
  ASSERT_TRUE(parseIp("fe80::1", &a));
  EXPECT_EQ(a.bytes, b.bytes) << "one address, two spellings";
}

TEST(Values, RankIdsAreDecimalDigitsOnly) {
  for (const char* bad : {"+0", " 0", "0.0", "0x0", "", "99999999999"}) {
    const Diagnostics d =
        parseJson(oneServer(std::string(R"({"device_id": "0", "rank_id": ")") + bad + "\"}"));
    const Diagnostic* e = d.findError(Rule::kBadRankId);
    ASSERT_NE(e, nullptr) << bad << describe(d);
    EXPECT_EQ(e->location.pointer, "/server_list/0/device/0/rank_id");
  }
}

TEST(Values, LongValuesAreCutInDiagnostics) {
  const std::string longIp(500, '1');
  const Diagnostics d =
      parseJson(oneServer(R"({"device_id": "0", "rank_id": "0", "device_ip": ")" + longIp + "\"}"));
  const Diagnostic* e = d.findError(Rule::kBadIp);
  ASSERT_NE(e, nullptr) << describe(d);
  EXPECT_LT(e->found.size(), 120u);
  EXPECT_NE(e->found.find("(500 characters)"), std::string::npos) << e->found;
}

TEST(Values, IPv6DuplicatesAreFoundWhateverTheSpelling) {
  const Diagnostics d = parseJson(oneServer(
      R"({"device_id": "0", "rank_id": "0", "device_ip": "fd00::1"},
         {"device_id": "1", "rank_id": "1", "device_ip": "fd00:0::1"})"));
  const Diagnostic* e = d.findError(Rule::kDuplicateIp);
  ASSERT_NE(e, nullptr) << describe(d);
  EXPECT_EQ(e->location.pointer, "/server_list/0/device/1/device_ip");
}

TEST(Json, SyntaxErrorAtEndOfInputHasItsLine) {
  const Diagnostics d = parseJson("{\n  \"status\": \"completed\",\n");
  const Diagnostic* e = d.findError(Rule::kSyntax);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->location.line, 3);
  EXPECT_EQ(e->location.column, 1);
}

TEST(Json, TopLevelMustBeAnObject) {
  const Diagnostics d = parseJson("[1, 2]");
  ASSERT_EQ(d.errors().size(), 1u) << describe(d);
  EXPECT_EQ(d.errors()[0].rule, Rule::kWrongType);
  EXPECT_EQ(d.errors()[0].found, "an array");
}

TEST(Json, NoVersionAndNoListIsOneError) {
  const Diagnostics d = parseJson(R"({"status": "completed"})");
  ASSERT_EQ(d.errors().size(), 1u) << describe(d);
  EXPECT_EQ(d.errors()[0].location.pointer, "/version");
}

TEST(Json, MissingStatusIsReported) {
  std::string text = oneServer(R"({"device_id": "0", "rank_id": "0"})");
  const std::string status = "\"status\": \"completed\", ";
  text.erase(text.find(status), status.size());
  const Diagnostics d = parseJson(text);
  ASSERT_EQ(d.errors().size(), 1u) << text << describe(d);
  EXPECT_EQ(d.errors()[0].rule, Rule::kMissingKey);
  EXPECT_EQ(d.errors()[0].location.pointer, "/status");
}

TEST(Yaml, EmptyDocumentIsAnError) {
  const Diagnostics d = parseYaml("");
  ASSERT_EQ(d.errors().size(), 1u) << describe(d);
  EXPECT_EQ(d.errors()[0].rule, Rule::kWrongType);
}

// YAML is Unicode: a stray byte is a syntax error where it is, as in JSON.
TEST(Yaml, InvalidUtf8IsASyntaxError) {
  const Diagnostics d = parseYaml("servers:\n  - id: a\x8f\n    devices: [{id: 0}]\n");
  ASSERT_EQ(d.errors().size(), 1u) << describe(d);
  EXPECT_EQ(d.errors()[0].rule, Rule::kSyntax);
  EXPECT_EQ(d.errors()[0].location.line, 2);
  EXPECT_EQ(d.errors()[0].location.column, 10);
  EXPECT_EQ(d.errors()[0].found, "byte 0x8f");
  EXPECT_TRUE(parseYaml("servers: [{id: \"n\xc3\xb6"
                        "de\", devices: [{id: 0}]}]")
                  .all()
                  .empty());
}

TEST(TextUtil, Utf8Validation) {
  EXPECT_EQ(invalidUtf8Offset("plain \xc3\xb6 \xe2\x82\xac \xf0\x9f\x98\x80"), std::string::npos);
  EXPECT_EQ(invalidUtf8Offset("ab\xc0\x80"), 2u) << "overlong NUL";
  EXPECT_EQ(invalidUtf8Offset("\xed\xa0\x80"), 0u) << "surrogate";
  EXPECT_EQ(invalidUtf8Offset("\xf4\x90\x80\x80"), 0u) << "above U+10FFFF";
  EXPECT_EQ(invalidUtf8Offset("a\xe2\x82"), 1u) << "truncated";
}

TEST(TextUtil, QuotedValuesStayReadableUtf8) {
  EXPECT_EQ(quoteValue("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(quoteValue("n\xc3\xb6"
                       "de\x01"),
            "\"n\xc3\xb6"
            "de\\x01\"");
  EXPECT_EQ(quoteValue("a\x8f\xc3"), "\"a\\x8f\\xc3\"") << "stray and truncated bytes";
  EXPECT_TRUE(isPrintableText("node-0 \xc3\xb6"));
  EXPECT_FALSE(isPrintableText("tab\there"));
  EXPECT_FALSE(isPrintableText("\xef\xbf\xbe"));
}

TEST(Yaml, InitializingStatusIsNotReady) {
  ClusterSpec spec;
  EXPECT_EQ(parseClusterYaml("status: initializing\n", test::quietOptions(), &spec).code(),
            ErrorCode::kNotReady);
}

TEST(Yaml, AliasesAndOddKeysDoNotConfuseTheReader) {
  const Diagnostics d = parseYaml(
      "servers:\n"
      "  - &s {id: a, devices: [{id: 0}]}\n"
      "  - *s\n"
      "  - {? [complex]: key, id: b, devices: [{id: 0}]}\n");
  EXPECT_NE(d.findError(Rule::kDuplicateServerId), nullptr) << describe(d);
  EXPECT_EQ(d.warnings().size(), 1u) << describe(d);
}

TEST(Spec, HelpersOnAValidatedSpec) {
  GenerateOptions options;
  options.servers = 2;
  options.devicesPerServer = 2;
  ClusterSpec spec;
  ASSERT_TRUE(generateCluster(options, &spec).ok());
  EXPECT_EQ(spec.localRanks(1), (std::vector<int>{2, 3}));
  EXPECT_EQ(spec.serverOf(-1), -1);
  EXPECT_EQ(spec.ranksPerServer(), 2);
  spec.servers[1].ranks.pop_back();
  EXPECT_EQ(spec.ranksPerServer(), 0) << "uneven";
  ClusterSpec other = spec;
  EXPECT_EQ(other, spec);
  other.ranks[0].devicePort = 1;
  EXPECT_NE(other, spec);
}

TEST(SpecDeathTest, LocalRanksOfAMissingServerAborts) {
  ClusterSpec spec;
  EXPECT_DEATH((void)spec.localRanks(0), "CHECK");
}

}  // namespace
}  // namespace cohort::ranktable
