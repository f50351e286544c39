// The values the profiling functions take apart: aclprofSetConfig's settings and
// the messages of marks (which go into a JSON file).
#include <cstring>
#include <string>

#include "acl/prof_common.h"

namespace cohort::acl::prof {
namespace {

// What aclprofSetConfig accepts for each setting.
struct SettingRule {
  aclprofConfigType type;
  const char* name;
  long low, high;      // an integer in [low, high] (high 0: a word, checked apart)
  const char* absent;  // why nothing is recorded for it, or null
};

constexpr const char* kNoHostSampling = "Cohort does not sample the host's CPU and memory";

constexpr SettingRule kSettings[] = {
    {ACL_PROF_STORAGE_LIMIT, "ACL_PROF_STORAGE_LIMIT", 200, 4294967295L, nullptr},
    {ACL_PROF_SYS_HARDWARE_MEM_FREQ, "ACL_PROF_SYS_HARDWARE_MEM_FREQ", 1, 100,
     "emulated devices have no memory counters"},
    {ACL_PROF_LLC_MODE, "ACL_PROF_LLC_MODE", 0, 0, "emulated devices have no LLC"},
    {ACL_PROF_SYS_IO_FREQ, "ACL_PROF_SYS_IO_FREQ", 1, 100, "emulated devices have no NIC counters"},
    {ACL_PROF_SYS_INTERCONNECTION_FREQ, "ACL_PROF_SYS_INTERCONNECTION_FREQ", 1, 50,
     "emulated devices have no link counters"},
    {ACL_PROF_DVPP_FREQ, "ACL_PROF_DVPP_FREQ", 1, 100, "emulated devices have no DVPP"},
    {ACL_PROF_HOST_SYS, "ACL_PROF_HOST_SYS", 0, 0, kNoHostSampling},
    {ACL_PROF_HOST_SYS_USAGE, "ACL_PROF_HOST_SYS_USAGE", 0, 0, kNoHostSampling},
    {ACL_PROF_HOST_SYS_USAGE_FREQ, "ACL_PROF_HOST_SYS_USAGE_FREQ", 1, 50, kNoHostSampling},
    {ACL_PROF_LOW_POWER_FREQ, "ACL_PROF_LOW_POWER_FREQ", 1, 100,
     "emulated devices have no power counters"},
    {ACL_PROF_SYS_MEM_SERVICEFLOW, "ACL_PROF_SYS_MEM_SERVICEFLOW", 0, 0,
     "emulated devices have no memory counters"},
    {ACL_PROF_SYS_CPU_FREQ, "ACL_PROF_SYS_CPU_FREQ", 1, 100,
     "emulated devices have no AI CPU counters"},
    {ACL_PROF_NTS_METRICS, "ACL_PROF_NTS_METRICS", 0, 0, "emulated devices have no NTS counters"},
    {ACL_PROF_PATH, "ACL_PROF_PATH", 0, 0, nullptr},
};

const SettingRule* ruleOf(aclprofConfigType type) {
  for (const SettingRule& r : kSettings) {
    if (r.type == type) return &r;
  }
  return nullptr;
}

// Whether `value` is what the setting takes; the reason in `why` if not.
bool validSetting(const SettingRule& rule, const std::string& value, std::string* why) {
  if (rule.high != 0) {
    std::string digits = value;
    if (rule.type == ACL_PROF_STORAGE_LIMIT && digits.size() > 2 &&
        (digits.compare(digits.size() - 2, 2, "MB") == 0)) {
      digits.resize(digits.size() - 2);
    }
    const bool numeric = !digits.empty() && digits.size() <= 10 &&
                         digits.find_first_not_of("0123456789") == std::string::npos;
    const long long n = numeric ? std::stoll(digits) : -1;
    *why = fmt::format("an integer in [{}, {}]{}", rule.low, rule.high,
                       rule.type == ACL_PROF_STORAGE_LIMIT ? " (MB), optionally with \"MB\"" : "");
    return numeric && n >= rule.low && n <= rule.high;
  }
  switch (rule.type) {
    case ACL_PROF_LLC_MODE:
      *why = "\"read\" or \"write\"";
      return value == "read" || value == "write";
    case ACL_PROF_HOST_SYS:
    case ACL_PROF_HOST_SYS_USAGE:
      *why = "\"cpu\", \"mem\" or \"cpu,mem\"";
      return value == "cpu" || value == "mem" || value == "cpu,mem" || value == "mem,cpu";
    case ACL_PROF_NTS_METRICS:
      *why = "\"PipeUtilization\"";
      return value == "PipeUtilization";
    default:
      return true;  // free text (a path, a service-flow list)
  }
}

}  // namespace

Outcome checkSetting(const char* fn, aclprofConfigType type, const std::string& value,
                     const char** name, const char** absent) {
  const SettingRule* rule = ruleOf(type);
  if (rule == nullptr) {
    return invalidArgument(fn, "configType {} is not a setting (see aclprofConfigType)",
                        static_cast<int>(type));
  }
  std::string why;
  if (value.empty() || !validSetting(*rule, value, &why))
    return invalidArgument(fn, "{} '{}' is invalid: expected {}", rule->name, value, why);
  *name = rule->name;
  *absent = rule->absent;
  return Status::Ok();
}

const char* settingName(aclprofConfigType type) {
  const SettingRule* rule = ruleOf(type);
  return rule != nullptr ? rule->name : "unknown setting";
}

std::string messageOf(const char* text, std::size_t length) {
  const std::string raw(text, strnlen(text, length));
  std::string out;
  out.reserve(raw.size());
  std::size_t i = 0;
  while (i < raw.size()) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(raw[k]); };
    const unsigned char c = byte(i);
    std::size_t n = c < 0x80                 ? 1
                    : c >= 0xC2 && c <= 0xDF ? 2
                    : c >= 0xE0 && c <= 0xEF ? 3
                    : c >= 0xF0 && c <= 0xF4 ? 4
                                             : 0;
    // The second byte's range is narrower after E0, ED, F0 and F4 (no overlong
    // forms, surrogates or code points past U+10FFFF).
    const unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    const unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    bool ok = n != 0 && i + n <= raw.size();
    for (std::size_t k = 1; ok && k < n; ++k) {
      const unsigned char b = byte(i + k);
      ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    }
    if (ok) {
      out.append(raw, i, n);
      i += n;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

}  // namespace cohort::acl::prof
