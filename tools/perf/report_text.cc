#include "tools/perf/report_text.h"

#include <string>

namespace cohort::perf {

namespace {

const char* kAverageNames[] = {"rank0", "mean", "min", "max"};

const char* kindName(Coll c) { return peerName(c); }

std::string redopColumn(const CaseSpec& s) {
  return isReduction(s.coll) ? reduceOpName(s.op) : "none";
}

}  // namespace

TextReport::TextReport(const PerfOptions& options, bool print, bool progress, std::FILE* out)
    : options_(options), print_(print), progress_(print && progress), out_(out) {}

void TextReport::header(const RunInfo& info) {
  info_ = info;
  if (!print_) return;
  const PerfOptions& o = options_;
  if (o.hccl) {
    std::fprintf(out_, "the minbytes is %zu, maxbytes is %zu, iters is %d, warmup_iters is %d\n",
                 o.minBytes, o.maxBytes, o.iters, o.warmup);
    std::fflush(out_);
    return;
  }
  std::fprintf(out_, "# nccl-tests-style CPU collective benchmark\n");
  std::fprintf(out_, "# lib=cohort  version=\"%s\"  transport=%s  nranks=%d\n",
               info.libraryVersion.c_str(), info.transport.c_str(), info.nranks);
  std::fprintf(out_,
               "# minBytes=%zu maxBytes=%zu step=%gx iters=%d warmup=%d budget=%zu check=%d "
               "time=%s-over-ranks dtype=%s op=%s inplace=%d root=%d\n",
               o.minBytes, o.maxBytes, o.factor, o.iters, o.warmup, o.budget, o.check,
               kAverageNames[o.average], o.typeArg.c_str(), o.opArg.c_str(), o.inPlace ? 1 : 0,
               o.root);
  std::fprintf(out_,
               "# cohort %s  api=%d.%d  protocol=%d  ranks=%d  nodes=%d  local_ranks=%d  "
               "device(rank 0)=%d\n",
               info.libraryVersion.c_str(), info.apiVersion / 1000, info.apiVersion % 1000,
               info.protocolVersion, info.nranks, info.nodes, info.localRanks, info.device);
  std::fprintf(out_, "# chosen after warm-up: %s  (per size: column algo)  -A %s  -t %s\n",
               info.choice.empty() ? "-" : info.choice.c_str(),
               o.algorithm.empty() ? "-" : o.algorithm.c_str(),
               o.transport.empty() ? "-" : o.transport.c_str());
  std::fprintf(out_, "#\n");
  std::fflush(out_);
}

void TextReport::blockStarted(const BlockResult& b) {
  ++blocksStarted_;
  if (!print_) return;
  if (!b.note.empty()) std::fprintf(out_, "# note: %s\n", b.note.c_str());
  if (options_.hccl) {
    if (options_.collectives.size() > 1 || options_.types.size() > 1 || options_.ops.size() > 1) {
      std::fprintf(out_, "%s# %s\n", blocksStarted_ > 1 ? "\n" : "", b.name.c_str());
    }
    std::fprintf(out_, "%-15s | %-12s | %-18s | %s\n",
                 "data_size(Bytes):", "aveg_time(us):", "alg_bandwidth(GB/s):", "check_result:");
    std::fflush(out_);
    return;
  }
  std::fprintf(out_, "# Collective: %s  kind=%s  lib=cohort  transport=%s  nranks=%d%s\n",
               b.name.c_str(), kindName(b.spec.coll), info_.transport.c_str(), info_.nranks,
               b.spec.inPlace ? "  (in place)" : "");
  std::fprintf(out_, "#%11s  %12s  %8s  %6s  %6s  %10s  %8s  %8s  %6s  %6s  %s\n", "size", "count",
               "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "iters", "algo");
  std::fprintf(out_, "#%11s  %12s  %8s  %6s  %6s  %10s  %8s  %8s  %6s  %6s  %s\n", "(B)",
               "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "", "");
  std::fflush(out_);
}

void TextReport::sizeStarted(const BlockResult& b, std::size_t bytes, int index, int total) {
  if (!progress_) return;
  std::fprintf(stderr, "\r[cohort-perf] %s: %zu bytes (%d/%d)\033[K", b.name.c_str(), bytes, index,
               total);
  std::fflush(stderr);
}

void TextReport::rowDone(const BlockResult& b, const RowResult& r) {
  if (!print_) return;
  if (progress_) clearProgress();
  if (options_.hccl) {
    const char* result = r.wrong < 0 ? "NULL" : r.wrong == 0 ? "success" : "failed";
    std::fprintf(out_, "%-17zu | %-14.2f | %-20.5f | %s\n", r.bytes, r.timeUs, r.algbw, result);
  } else {
    const int root = hasRoot(b.spec.coll) ? b.spec.root : -1;
    // As the peers: an unchecked size (-c 0) counts 0 wrong elements.
    const long long wrong = r.wrong < 0 ? 0 : r.wrong;
    std::fprintf(out_, "%12zu  %12zu  %8s  %6s  %6d  %10.2f  %8.3f  %8.3f  %6lld  %6d  %s\n",
                 r.bytes, r.count, typeInfo(b.spec.type).name, redopColumn(b.spec).c_str(), root,
                 r.timeUs, r.algbw, r.busbw, wrong, r.iters, r.algo.c_str());
  }
  std::fflush(out_);
}

void TextReport::blockDone(const BlockResult& b) {
  if (progress_) clearProgress();
  if (!print_ || options_.hccl) return;
  std::fprintf(out_, "# Wrong elements       : %lld %s\n", b.wrong, b.wrong ? "FAILED" : "OK");
  std::fprintf(out_, "# Avg bus bandwidth    : %.4f\n#\n", b.avgBusbw);
  std::fflush(out_);
}

void TextReport::streamOverhead(const StreamOverhead& s) {
  if (!print_) return;
  const char* c = options_.hccl ? "" : "# ";
  std::fprintf(out_, "%sStream overhead: 8-byte allreduce (float sum), %d calls, mean over ranks\n",
               c, s.calls);
  std::fprintf(out_, "%s  back to back, one synchronize  : %10.2f us/call\n", c, s.pipelinedUs);
  std::fprintf(out_, "%s  synchronize after every call   : %10.2f us/call\n", c, s.synchronizedUs);
  std::fprintf(out_, "%s  default stream, synchronized   : %10.2f us/call\n", c, s.blockingUs);
  std::fprintf(out_, "%s  ratio synchronized / pipelined : %10.2f\n", c,
               s.pipelinedUs > 0 ? s.synchronizedUs / s.pipelinedUs : 0.0);
  std::fprintf(out_, "%s  ratio synchronized / default   : %10.2f\n", c,
               s.blockingUs > 0 ? s.synchronizedUs / s.blockingUs : 0.0);
  if (!options_.hccl) std::fprintf(out_, "#\n");
  std::fflush(out_);
}

void TextReport::clearProgress() {
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace cohort::perf
