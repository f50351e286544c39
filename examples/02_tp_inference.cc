// Example 2: tensor-parallel inference of a small transformer decoder across
// emulated devices, the Megatron way.
//
//   tp_inference --tp 4                  one process, 4 threads, 4 devices (default)
//   cohortrun -n 4 tp_inference --job    4 processes, one rank each
//   tp_inference --comm-dtype bf16       activations allreduced in bf16 (or fp16)
//   tp_inference --graph                 also replay each decode step from a captured model
//
// Each layer's QKV and first MLP linear are column-parallel, the attention output
// and second MLP linear row-parallel with an allreduce after each, and the
// vocabulary-sharded logits are allgathered. Compute runs as kernels (OpenBLAS
// sgemm) on each device's compute stream; the collectives run on the
// communicator's stream, and micro-batches let one micro-batch's allreduce
// overlap the next one's GEMMs. The greedy tokens and the logits are checked
// against a single-device run of the same model; the exit status says whether
// they match.
#include <cblas.h>
#include <cohort/communicator.h>
#include <cohort/runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tp_inference/run.h"

namespace rt = cohort::runtime;
using cohort::Communicator;
using cohort::Status;

namespace {

void addOptions(CLI::App* app, tp::Options* o) {
  app->add_option("--tp", o->tp, "Tensor-parallel ranks (threads; with --job: the job's size)")
      ->check(CLI::IsMember({1, 2, 4, 8}))
      ->capture_default_str();
  app->add_option("--layers", o->model.layers, "Decoder layers")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app->add_option("--hidden", o->model.hidden, "Hidden size")
      ->check(CLI::Range(8, 8192))
      ->capture_default_str();
  app->add_option("--heads", o->model.heads, "Attention heads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app->add_option("--vocab", o->model.vocab, "Vocabulary size")
      ->check(CLI::Range(8, 1 << 20))
      ->capture_default_str();
  app->add_option("--batch", o->shape.batch, "Prompts generated together")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app->add_option("--prompt", o->shape.promptLen, "Prompt length")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app->add_option("--tokens", o->tokens, "New tokens per prompt")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app->add_option("--microbatches", o->shape.microbatches, "Micro-batches the batch is split in")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  const std::map<std::string, cohort::DataType> types = {{"fp32", cohort::DataType::kFloat32},
                                                         {"bf16", cohort::DataType::kBFloat16},
                                                         {"fp16", cohort::DataType::kFloat16}};
  app->add_option("--comm-dtype", o->commType,
                  "Type the activations are allreduced in (converted from fp32 before, back "
                  "after); the default tolerance follows it")
      ->transform(CLI::CheckedTransformer(types))
      ->option_text("fp32|bf16|fp16 (default fp32)");
  app->add_option("--tolerance", o->tolerance,
                  "Largest relative logit error accepted against the single device (default: "
                  "1e-4 with fp32, 4e-3 with fp16, 3e-2 with bf16)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--rounds", o->rounds,
                  "Timed rounds of each tensor-parallel run, alternating; each row shows the "
                  "median round")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app->add_flag("--job", o->job, "Run as one rank of a job (cohortrun, mpirun) per process");
  app->add_flag("--graph", o->graph,
                "Also run with every decode step captured once (stream capture, like "
                "aclmdlRI) and replayed; compare the host's time to issue a step");
}

void printSummary(const tp::Options& o, const tp::Summary& s, const std::string& how) {
  const tp::ModelConfig& m = o.model;
  fmt::print("Cohort tp_inference: {}-way tensor parallel, {}, activations communicated as {}\n",
             o.tp, how, cohort::dataTypeName(o.commType));
  fmt::print(
      "model: {} layers, hidden {}, {} heads, ffn {}, vocab {}; batch {} in {} "
      "micro-batches, prompt {}, {} new tokens; tensor-parallel rows: the median of {} "
      "alternating round(s)\n\n",
      m.layers, m.hidden, m.heads, m.ffn(), m.vocab, o.shape.batch, o.shape.microbatches,
      o.shape.promptLen, o.tokens, o.rounds);
  fmt::print("{:<26} {:>10} {:>10} {:>14} {:>10}\n", "run", "tokens/s", "ms/token", "comm ms/rank",
             "overlap");
  auto row = [&](const std::string& name, const tp::PhaseResult& r, bool comm) {
    const double generated = static_cast<double>(o.shape.batch) * o.tokens;
    fmt::print("{:<26} {:>10.1f} {:>10.2f} {:>14} {:>10}\n", name, generated / r.seconds,
               1e3 * r.seconds / o.tokens, comm ? fmt::format("{:.1f}", 1e3 * r.commSeconds) : "-",
               comm ? fmt::format("{:.1f}%", 100 * r.overlapShare()) : "-");
  };
  row("single device (reference)", s.reference, false);
  row(fmt::format("tp={} without overlap", o.tp), s.serial, true);
  row(fmt::format("tp={} with overlap", o.tp), s.overlap, true);
  if (o.graph) row(fmt::format("tp={} replayed", o.tp), s.replayed, true);
  // The rounds' own ratios rather than the ratio of the two rows: a round's two
  // runs are back to back, so a drift of the machine's speed between rounds
  // cancels out; their spread shows what one difference is worth.
  std::vector<double> speedups = s.roundSpeedups;
  std::sort(speedups.begin(), speedups.end());
  if (speedups.empty()) speedups.push_back(0.0);  // --rounds is at least 1: not expected
  fmt::print(
      "\noverlap: {:.1f}% of communication hidden behind compute, {:.2f}x the speed of "
      "the run without overlap (the median of {} rounds; they range from {:.2f}x to {:.2f}x)\n",
      100 * s.overlap.overlapShare(), speedups[(speedups.size() - 1) / 2], o.rounds,
      speedups.front(), speedups.back());
  if (o.graph) {
    std::vector<double> replay = s.replaySpeedups;
    std::sort(replay.begin(), replay.end());
    if (replay.empty()) replay.push_back(0.0);
    const double eagerUs = 1e6 * s.overlap.issueSeconds, replayUs = 1e6 * s.replayed.issueSeconds;
    fmt::print(
        "replay: the host issues a decode step in {:.1f} us instead of {:.1f} us ({:.1f}x less; "
        "the median step, the slowest rank)\n",
        replayUs, eagerUs, replayUs > 0 ? eagerUs / replayUs : 0.0);
    fmt::print(
        "replay: {:.2f}x the speed of the run with overlap (the median of {} rounds; they range "
        "from {:.2f}x to {:.2f}x); {}/{} tokens identical to it\n",
        replay[(replay.size() - 1) / 2], o.rounds, replay.front(), replay.back(),
        s.replayTokensEqual, s.replayTokensCompared);
  }
  const std::string ties =
      s.nearTies == 0 ? ""
                      : fmt::format(", {} sequence(s) compared up to a near tie", s.nearTies);
  const std::string mismatch =
      s.firstMismatch < 0 ? ""
                          : fmt::format(" (first difference: sequence {}, new token {})",
                                        s.firstMismatch / o.tokens, s.firstMismatch % o.tokens);
  fmt::print(
      "check against the single device: {}/{} tokens identical{}{}, max logit error {:.2e} "
      "(limit {:.0e}, {}): {}\n",
      s.tokensEqual, s.tokensCompared, mismatch, ties, s.maxLogitError, o.tolerance,
      cohort::dataTypeName(o.commType), s.passed ? "PASSED" : "FAILED");
}

int fail(const std::string& what, const Status& s) {
  fmt::print(stderr, "tp_inference: {}: {}\n", what, s.toString());
  return 1;
}

// One process, one thread per device (like HcclCommInitAll).
int runThreads(const tp::Options& o) {
  int count = 0;
  Status s = rt::getDeviceCount(&count);
  if (!s.ok()) return fail("device count", s);
  if (count < o.tp) {
    return fail("devices",
                Status(cohort::ErrorCode::kInvalidDevice,
                       fmt::format("--tp {} needs {} devices, {} visible", o.tp, o.tp, count)));
  }
  std::vector<int> devices;
  for (int d = 0; d < o.tp; ++d) devices.push_back(d);
  std::vector<std::unique_ptr<Communicator>> comms;
  if (!(s = Communicator::initAll(devices, &comms)).ok()) return fail("initAll", s);
  std::vector<tp::Summary> summaries(devices.size());
  std::vector<Status> results(devices.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    threads.emplace_back([&, i] {
      results[i] = rt::setDevice(devices[i]);
      if (results[i].ok()) results[i] = tp::runRank(comms[i].get(), o, &summaries[i]);
      // A failed rank would leave the others waiting in a collective: abort them.
      if (!results[i].ok()) {
        for (auto& c : comms) c->abort();
      }
      (void)rt::resetDevice(devices[i]);
    });
  }
  for (auto& t : threads) t.join();
  int failed = 0;  // every failed rank: the first one may only report the abort
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (!results[i].ok()) failed += fail(fmt::format("rank {}", i), results[i]);
  }
  if (failed > 0) return 1;
  comms.clear();
  printSummary(o, summaries[0],
               fmt::format("one process driving {} devices with {} threads", o.tp, o.tp));
  return summaries[0].passed ? 0 : 1;
}

// One rank of a job started by cohortrun, mpirun, Slurm or torchrun-style env.
int runJob(tp::Options o, bool tpGiven) {
  std::unique_ptr<Communicator> comm;
  Status s = Communicator::initFromEnvironment(&comm);
  if (!s.ok()) return fail("joining the job (initFromEnvironment)", s);
  if (tpGiven && o.tp != comm->size()) {
    return fail("options",
                Status(cohort::ErrorCode::kInvalidArgument,
                       fmt::format("--tp {} but the job has {} ranks", o.tp, comm->size())));
  }
  o.tp = comm->size();
  if (!(s = tp::checkOptions(o)).ok()) return fail("options", s);
  tp::Summary summary;
  s = tp::runRank(comm.get(), o, &summary);
  if (!s.ok()) {
    comm->abort();
    return fail(fmt::format("rank {}", comm->rank()), s);
  }
  if (comm->rank() == 0) {
    printSummary(o, summary, fmt::format("a job of {} processes, one rank each", o.tp));
    std::fflush(stdout);
  }
  // Rank 0 has printed before any rank exits (a launcher stops the others as soon
  // as one rank exits non-zero).
  if (!(s = comm->barrier(nullptr)).ok() || !(s = rt::streamSynchronize(nullptr)).ok()) {
    return fail("final barrier", s);
  }
  return summary.passed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  openblas_set_num_threads(1);  // ranks share the cores: one BLAS thread each
  CLI::App app{"tp_inference: tensor-parallel greedy generation across emulated devices"};
  tp::Options o;
  addOptions(&app, &o);
  CLI11_PARSE(app, argc, argv);
  if (app.count("--tolerance") == 0) o.tolerance = tp::defaultTolerance(o.commType);
  o.model.maxLen = o.shape.promptLen + o.tokens;
  if (o.job) return runJob(o, app.count("--tp") > 0);
  const Status s = tp::checkOptions(o);
  return s.ok() ? runThreads(o) : fail("options", s);
}
