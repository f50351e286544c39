// Slurm's compact lists. The grammar (from Slurm's hostlist): items separated by
// top-level commas; an item is text with bracket groups "[a-b,c,...]" whose
// numbers keep the width of the lower bound ("01-10" -> 01 02 ... 10); several
// groups in one item multiply ("r[1-2]n[1-2]" -> r1n1 r1n2 r2n1 r2n2).
#include <cctype>
#include <cstdint>

#include "common/error.h"
#include "transport/jobenv/job_env.h"

namespace cohort::transport {

namespace {

constexpr std::size_t kMaxNames = 1 << 20;

Status listError(const std::string& variable, const std::string& text, const std::string& why) {
  return makeError(ErrorCode::kConfigError, "{}='{}' is not a valid Slurm list: {}", variable, text,
                   why);
}

bool allDigits(const std::string& s) {
  if (s.empty() || s.size() > 18) return false;
  for (unsigned char c : s) {
    if (!std::isdigit(c)) return false;
  }
  return true;
}

// Splits at commas outside brackets.
std::vector<std::string> splitTopLevel(const std::string& text) {
  std::vector<std::string> items(1);
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      items.emplace_back();
    } else {
      items.back() += c;
    }
  }
  return items;
}

// The numbers of one bracket group "01-03,07", zero-padded as written.
bool expandGroup(const std::string& body, std::vector<std::string>* out, std::string* why) {
  std::size_t start = 0;
  while (start <= body.size()) {
    std::size_t comma = body.find(',', start);
    if (comma == std::string::npos) comma = body.size();
    const std::string range = body.substr(start, comma - start);
    const std::size_t dash = range.find('-');
    const std::string lo = range.substr(0, dash);
    const std::string hi = dash == std::string::npos ? lo : range.substr(dash + 1);
    if (!allDigits(lo) || !allDigits(hi)) {
      *why = "'[" + body + "]' holds '" + range + "', not a number or a range a-b";
      return false;
    }
    const std::uint64_t a = std::stoull(lo);
    const std::uint64_t b = std::stoull(hi);
    if (a > b || b - a >= kMaxNames || out->size() + (b - a) >= kMaxNames) {
      *why = a > b ? "range '" + range + "' runs backwards" : "more than a million names";
      return false;
    }
    for (std::uint64_t v = a; v <= b; ++v) {
      std::string digits = std::to_string(v);
      if (digits.size() < lo.size()) digits.insert(0, lo.size() - digits.size(), '0');
      out->push_back(std::move(digits));
    }
    start = comma + 1;
  }
  return true;
}

// One item, recursively: prefix, first group, then the expansions of the rest.
bool expandItem(const std::string& item, std::vector<std::string>* out, std::string* why) {
  const std::size_t open = item.find('[');
  if (open == std::string::npos) {
    if (item.find(']') != std::string::npos) {
      *why = "']' without '[' in '" + item + "'";
      return false;
    }
    out->push_back(item);
    return true;
  }
  const std::size_t close = item.find(']', open);
  if (close == std::string::npos || item.find('[', open + 1) < close) {
    *why = "unclosed '[' in '" + item + "'";
    return false;
  }
  const std::string prefix = item.substr(0, open);
  if (prefix.find(']') != std::string::npos) {
    *why = "']' without '[' in '" + item + "'";
    return false;
  }
  std::vector<std::string> numbers;
  std::vector<std::string> rest;
  if (!expandGroup(item.substr(open + 1, close - open - 1), &numbers, why)) return false;
  if (!expandItem(item.substr(close + 1), &rest, why)) return false;
  if (numbers.size() * rest.size() + out->size() > kMaxNames) {
    *why = "more than a million names";
    return false;
  }
  for (const auto& n : numbers) {
    for (const auto& r : rest) out->push_back(prefix + n + r);
  }
  return true;
}

}  // namespace

Status expandSlurmNodeList(const std::string& variable, const std::string& text,
                           std::vector<std::string>* names) {
  std::vector<std::string> result;
  std::string why;
  for (const std::string& item : splitTopLevel(text)) {
    if (item.empty()) return listError(variable, text, "an empty host name");
    if (!expandItem(item, &result, &why)) return listError(variable, text, why);
  }
  *names = std::move(result);
  return Status::Ok();
}

Status expandSlurmTasksPerNode(const std::string& variable, const std::string& text,
                               std::vector<int>* counts) {
  std::vector<int> result;
  for (const std::string& item : splitTopLevel(text)) {
    const std::size_t paren = item.find("(x");
    const std::string count = item.substr(0, paren);
    std::string repeat = "1";
    if (paren != std::string::npos) {
      if (item.back() != ')') return listError(variable, text, "'" + item + "' lacks ')'");
      repeat = item.substr(paren + 2, item.size() - paren - 3);
    }
    if (!allDigits(count) || !allDigits(repeat) || count.size() > 9 || repeat.size() > 7) {
      return listError(variable, text, "'" + item + "' is not N or N(xM)");
    }
    const std::size_t times = std::stoul(repeat);
    if (result.size() + times > kMaxNames) {
      return listError(variable, text, "more than a million nodes");
    }
    result.insert(result.end(), times, std::stoi(count));
  }
  *counts = std::move(result);
  return Status::Ok();
}

}  // namespace cohort::transport
