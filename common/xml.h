// Text for XML and SVG files the tools write (cohort-perf --plot, cohort-linkcheck
// --plot).
#pragma once

#include <string>

namespace cohort {

/// `s` with the characters XML gives a meaning (& < > ") written as entities, so that
/// any label can stand in an attribute or between tags.
inline std::string xmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace cohort
