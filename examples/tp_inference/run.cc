#include "tp_inference/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tp {

namespace rt = cohort::runtime;
using cohort::Communicator;
using cohort::ReduceOp;
using cohort::Status;

namespace {

// What rank 0 keeps of a generation for the check.
struct Generation {
  std::vector<std::int32_t> tokens;  // [batch x tokens]
  std::vector<float> logits;         // [tokens x batch x vocab]
};

// Combines host values over the ranks through a small device buffer.
Status reduceValues(Communicator* comm, std::vector<double>* values, ReduceOp op) {
  void* dev = nullptr;
  const std::size_t bytes = values->size() * sizeof(double);
  TP_TRY(rt::deviceMalloc(&dev, bytes));
  Status s = rt::memcpy(dev, bytes, values->data(), bytes, rt::MemcpyKind::kHostToDevice);
  if (s.ok())
    s = comm->allReduce(dev, dev, values->size(), cohort::DataType::kFloat64, op, nullptr);
  if (s.ok()) s = rt::streamSynchronize(nullptr);
  if (s.ok()) s = rt::memcpy(values->data(), bytes, dev, bytes, rt::MemcpyKind::kDeviceToHost);
  (void)rt::deviceFree(dev);
  return s;
}

Status barrier(Communicator* comm) {
  TP_TRY(comm->barrier(nullptr));
  return rt::streamSynchronize(nullptr);
}

// How one generation runs: overlapped or not, decode steps issued or replayed.
struct RunKind {
  bool overlap = true;
  bool replay = false;
};

Status timedGenerate(TpEngine& engine, int tokens, RunKind kind, const std::string& label,
                     bool progress, double* seconds) {
  const double begin = nowSeconds();
  TP_TRY(engine.enqueueGenerate(tokens, kind.overlap, kind.replay));
  TP_TRY(engine.wait(label, progress));
  *seconds = nowSeconds() - begin;
  return Status::Ok();
}

// Pages in the buffers, starts OpenBLAS and the connections before timing (and
// captures the replayed decode step).
Status warmUp(TpEngine& engine, const Options& o) {
  TP_TRY(engine.enqueueGenerate(std::min(2, o.tokens), true));
  TP_TRY(engine.wait("", false));
  if (!o.graph) return Status::Ok();
  TP_TRY(engine.enqueueGenerate(std::min(2, o.tokens), true, true));
  return engine.wait("", false);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

Status measure(Communicator* comm, TpEngine& engine, const Options& o, RunKind kind,
               PhaseResult* out, Generation* gen) {
  TP_TRY(barrier(comm));  // every rank starts the clock together
  const std::string label =
      fmt::format("tp={} {}", comm->size(),
                  !kind.overlap ? "without overlap" : kind.replay ? "replayed" : "with overlap");
  double seconds = 0;
  TP_TRY(timedGenerate(engine, o.tokens, kind, label, comm->rank() == 0, &seconds));
  const OverlapStats stats = engine.overlap();
  std::vector<double> slowest{seconds, median(engine.issueTimes())};
  TP_TRY(reduceValues(comm, &slowest, ReduceOp::kMax));
  std::vector<double> sums{stats.commSeconds, stats.hiddenSeconds};
  TP_TRY(reduceValues(comm, &sums, ReduceOp::kSum));
  out->seconds = slowest[0];
  out->issueSeconds = slowest[1];
  out->commSeconds = sums[0] / comm->size();
  out->hiddenSeconds = sums[1] / comm->size();
  return comm->rank() == 0 ? engine.fetch(&gen->tokens, &gen->logits) : Status::Ok();
}

// The round of median time (the lower middle one of an even count).
PhaseResult medianRound(std::vector<PhaseResult> rounds) {
  std::sort(rounds.begin(), rounds.end(),
            [](const PhaseResult& a, const PhaseResult& b) { return a.seconds < b.seconds; });
  return rounds[(rounds.size() - 1) / 2];
}

// The same model, whole, on this rank's device, without any communication.
Status runReference(const Options& o, PhaseResult* out, Generation* gen) {
  ShardWeights weights;
  TP_TRY(weights.load(o.model, 1, 0));
  std::unique_ptr<TpEngine> engine;
  TP_TRY(TpEngine::create(o.model, o.shape, &weights, nullptr, cohort::DataType::kFloat32, true,
                          &engine));
  TP_TRY(warmUp(*engine, o));
  TP_TRY(timedGenerate(*engine, o.tokens, RunKind{}, "single device", true, &out->seconds));
  return engine->fetch(&gen->tokens, &gen->logits);
}

// Sequence by sequence, step by step while the tokens so far are the same: each
// logits row within the tolerance of the reference's, relative to the row's largest
// magnitude, and the same token, or a near tie: a token whose reference logit is
// within the tolerance of the best one, which the rounding of a 16-bit allreduce can
// tip. Greedy decoding amplifies such a flip (every later token has another
// context), so the sequence is compared no further.
void compare(const Generation& got, const Generation& ref, int batch, int vocab,
             double tolerance, Summary* s) {
  if (got.logits.size() != ref.logits.size() || got.tokens.size() != ref.tokens.size()) {
    s->maxLogitError = INFINITY;
    if (s->firstMismatch < 0) s->firstMismatch = 0;
    return;
  }
  const std::size_t steps = ref.tokens.size() / batch;
  for (std::size_t b = 0; b < static_cast<std::size_t>(batch); ++b) {
    for (std::size_t t = 0; t < steps; ++t) {
      const std::size_t row = (t * batch + b) * vocab;
      double diff = 0, scale = 0;
      for (std::size_t i = row; i < row + vocab; ++i) {
        diff = std::max(diff, static_cast<double>(std::fabs(got.logits[i] - ref.logits[i])));
        scale = std::max(scale, static_cast<double>(std::fabs(ref.logits[i])));
      }
      if (scale == 0) scale = 1;
      s->maxLogitError = std::max(s->maxLogitError, diff / scale);
      const std::size_t i = b * steps + t;
      ++s->tokensCompared;
      if (got.tokens[i] == ref.tokens[i]) {
        ++s->tokensEqual;
        continue;
      }
      const double margin = (ref.logits[row + ref.tokens[i]] - ref.logits[row + got.tokens[i]]) /
                            scale;
      if (margin <= tolerance) {
        ++s->nearTies;
      } else if (s->firstMismatch < 0) {
        s->firstMismatch = static_cast<int>(i);
      }
      break;
    }
  }
}

}  // namespace

double defaultTolerance(cohort::DataType commType) {
  switch (commType) {
    case cohort::DataType::kFloat16: return 4e-3;   // about 8 x 2^-11
    case cohort::DataType::kBFloat16: return 3e-2;  // about 8 x 2^-8
    default: return 1e-4;
  }
}

Status checkOptions(const Options& o) {
  TP_TRY(checkConfig(o.model, o.tp));
  if (o.shape.microbatches > o.shape.batch) {
    return Status(cohort::ErrorCode::kInvalidArgument,
                  fmt::format("--microbatches {} exceeds --batch {}: every micro-batch needs a "
                              "prompt",
                              o.shape.microbatches, o.shape.batch));
  }
  return Status::Ok();
}

Status runRank(Communicator* comm, const Options& o, Summary* out) {
  const bool root = comm->rank() == 0;
  ShardWeights weights;
  TP_TRY(weights.load(o.model, comm->size(), comm->rank()));
  std::unique_ptr<TpEngine> engine;
  TP_TRY(TpEngine::create(o.model, o.shape, &weights, comm, o.commType, root, &engine));
  TP_TRY(warmUp(*engine, o));
  // Every run in every round, their order rotated each round so that none is
  // always the one a drift of the machine's speed favours. Every generation is checked.
  std::vector<RunKind> kinds{{true, false}, {false, false}};
  if (o.graph) kinds.push_back({true, true});
  std::vector<PhaseResult> serial, overlapped, replayed;
  std::vector<Generation> generations;
  for (int r = 0; r < o.rounds; ++r) {
    Generation eager, replay;
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      const RunKind kind = kinds[(k + static_cast<std::size_t>(r)) % kinds.size()];
      PhaseResult result;
      Generation gen;
      TP_TRY(measure(comm, *engine, o, kind, &result, &gen));
      (!kind.overlap ? serial : kind.replay ? replayed : overlapped).push_back(result);
      if (!root) continue;
      if (kind.overlap) (kind.replay ? replay : eager).tokens = gen.tokens;
      generations.push_back(std::move(gen));
    }
    out->roundSpeedups.push_back(serial.back().seconds / overlapped.back().seconds);
    if (!o.graph) continue;
    out->replaySpeedups.push_back(overlapped.back().seconds / replayed.back().seconds);
    for (std::size_t i = 0; i < eager.tokens.size() && i < replay.tokens.size(); ++i) {
      ++out->replayTokensCompared;
      out->replayTokensEqual += eager.tokens[i] == replay.tokens[i];
    }
  }
  out->serial = medianRound(serial);
  out->overlap = medianRound(overlapped);
  if (o.graph) out->replayed = medianRound(replayed);
  std::vector<double> passed{1.0};
  if (root) {
    Generation reference;
    TP_TRY(runReference(o, &out->reference, &reference));
    for (const Generation& gen : generations) {
      compare(gen, reference, o.shape.batch, o.model.vocab, o.tolerance, out);
    }
    passed[0] = out->firstMismatch < 0 && out->maxLogitError <= o.tolerance &&
                out->replayTokensEqual == out->replayTokensCompared;
  }
  TP_TRY(reduceValues(comm, &passed, ReduceOp::kMin));  // every rank learns the verdict
  out->passed = passed[0] == 1.0;
  return Status::Ok();
}

}  // namespace tp
