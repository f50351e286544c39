// Entry points: parse text, load a file, and wait for an "initializing" table.
// A cluster controller (Kubernetes and the like) writes the rank table with
// status "initializing" and fills it in later, so loading re-reads the file
// until it is "completed", as HCCL does.
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "cohort/ranktable.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "common/wait.h"
#include "ranktable/raw_table.h"

namespace cohort::ranktable {

namespace {

using Reader = ReadResult (*)(std::string_view, Diagnostics*, RawTable*);

Status parseWith(Reader reader, std::string_view text, const LoadOptions& options,
                 const std::string& source, ClusterSpec* spec, Diagnostics* diagnostics) {
  Diagnostics local;
  Diagnostics* d = diagnostics != nullptr ? diagnostics : &local;
  d->clear();
  RawTable table;
  ClusterSpec built;
  const ReadResult result = reader(text, d, &table);
  if (result == ReadResult::kRead) validateTable(table, options, d, &built);
  for (const Diagnostic& warning : d->warnings()) {
    if (options.logWarnings) COHORT_LOG(kWarn, "ranktable", "{}: {}", source, warning.toString());
  }
  Status status = d->status(source);
  if (status.ok() && result != ReadResult::kRead) {
    status = makeError(ErrorCode::kInternal, "rank table {}: unusable without an error", source);
  }
  if (status.ok() && spec != nullptr) *spec = std::move(built);
  return recordError(status);
}

Status readFile(const std::string& path, std::string* text, Diagnostics* diagnostics) {
  struct stat info {};
  std::string problem;
  if (::stat(path.c_str(), &info) != 0) {
    problem = std::strerror(errno);
  } else if (!S_ISREG(info.st_mode)) {
    problem = "not a regular file";
  } else {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    if (in && !in.bad()) {
      *text = content.str();
      return Status::Ok();
    }
    problem = "read failed";
  }
  diagnostics->clear();
  diagnostics->error(Rule::kUnreadable, Location{}, problem, "a readable rank table file");
  return recordError(diagnostics->status(path));
}

// One attempt: read the file and parse it in its format.
Status readAndParse(const std::string& path, const LoadOptions& options, ClusterSpec* spec,
                    Diagnostics* diagnostics) {
  std::string text;
  COHORT_RETURN_IF_ERROR(readFile(path, &text, diagnostics));
  Format format = options.format;
  if (format == Format::kAuto) format = detectFormat(path, text);
  const Reader reader = format == Format::kYaml ? &readYamlTable : &readJsonTable;
  return parseWith(reader, text, options, path, spec, diagnostics);
}

bool endsWith(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

Format detectFormat(const std::string& path, std::string_view text) {
  if (endsWith(path, ".yaml") || endsWith(path, ".yml")) return Format::kYaml;
  if (endsWith(path, ".json")) return Format::kJson;
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{' ? Format::kJson : Format::kYaml;
}

Status parseRankTableJson(std::string_view text, const LoadOptions& options, ClusterSpec* spec,
                          Diagnostics* diagnostics) {
  return parseWith(&readJsonTable, text, options, "(JSON text)", spec, diagnostics);
}

Status parseClusterYaml(std::string_view text, const LoadOptions& options, ClusterSpec* spec,
                        Diagnostics* diagnostics) {
  return parseWith(&readYamlTable, text, options, "(YAML text)", spec, diagnostics);
}

Status loadClusterFile(const std::string& path, const LoadOptions& options, ClusterSpec* spec,
                       Diagnostics* diagnostics) {
  Diagnostics local;
  Diagnostics* d = diagnostics != nullptr ? diagnostics : &local;
  long timeoutMs = options.timeoutMs;
  if (timeoutMs < 0) {
    const Config& config = Config::global();
    COHORT_RETURN_IF_ERROR(recordError(config.status()));
    timeoutMs = config.ranktableTimeoutS * 1000L;
  }
  const Deadline deadline = Deadline::afterMs(timeoutMs);
  bool waited = false;
  for (;;) {
    const Status status = readAndParse(path, options, spec, d);
    // While waiting, a file caught in the middle of being rewritten is retried.
    const bool retry = status.code() == ErrorCode::kNotReady ||
                       (waited && (status.code() == ErrorCode::kParseError ||
                                   status.code() == ErrorCode::kInvalidArgument));
    if (!retry) return status;
    waited = true;
    if (deadline.expired()) {
      return recordError(makeError(ErrorCode::kTimeout,
                                   "rank table {} not completed after {} ms "
                                   "(COHORT_RANKTABLE_TIMEOUT); last read: {}",
                                   path, timeoutMs, status.message()));
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline.at() - Clock::now());
    const auto pause = std::min<std::chrono::milliseconds>(
        left, std::chrono::milliseconds(std::max(1, options.pollIntervalMs)));
    COHORT_LOG(kInfo, "ranktable", "{} is not ready ({}); re-reading in {} ms", path,
               errorString(status.code()), pause.count());
    std::this_thread::sleep_for(std::max(pause, std::chrono::milliseconds(0)));
  }
}

}  // namespace cohort::ranktable
