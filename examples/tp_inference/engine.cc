// TpEngine's resources: buffers, streams, events; waiting and results. The
// schedule of one generation is in engine_schedule.cc.
#include "tp_inference/engine.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

namespace tp {

namespace rt = cohort::runtime;
using cohort::ErrorCode;
using cohort::Status;

TpEngine::TpEngine(const ModelConfig& model, const RunShape& shape, const ShardWeights* weights,
                   cohort::Communicator* comm, cohort::DataType commType, bool keepLogits)
    : model_(model),
      shape_(shape),
      weights_(weights),
      comm_(comm),
      commType_(commType),
      keepLogits_(keepLogits),
      tp_(comm == nullptr ? 1 : comm->size()) {}

Status TpEngine::create(const ModelConfig& model, const RunShape& shape,
                        const ShardWeights* weights, cohort::Communicator* comm,
                        cohort::DataType commType, bool keepLogits,
                        std::unique_ptr<TpEngine>* out) {
  if (shape.batch < 1 || shape.promptLen < 1 || shape.microbatches < 1 ||
      shape.microbatches > shape.batch || shape.promptLen >= model.maxLen) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("run shape: batch {}, prompt {}, micro-batches {}, cache {}: need "
                              "1 <= micro-batches <= batch and prompt < cache length",
                              shape.batch, shape.promptLen, shape.microbatches, model.maxLen));
  }
  if (commType != cohort::DataType::kFloat32 && commType != cohort::DataType::kFloat16 &&
      commType != cohort::DataType::kBFloat16) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("communication type {}: float, float16 or bfloat16 only",
                              cohort::dataTypeName(commType)));
  }
  std::unique_ptr<TpEngine> engine(
      new TpEngine(model, shape, weights, comm, commType, keepLogits));
  TP_TRY(checkConfig(model, engine->tp_));
  TP_TRY(engine->allocate());
  *out = std::move(engine);
  return Status::Ok();
}

TpEngine::~TpEngine() {
  for (rt::Model* m : replay_) {
    if (m != nullptr) (void)rt::modelDestroy(m);
  }
  for (rt::Stream* s : {compute_, link_}) {
    if (s != nullptr) (void)rt::streamDestroy(s);
  }
  for (auto& m : micro_) {
    for (rt::Event* e : {m->ready, m->done}) {
      if (e != nullptr) (void)rt::eventDestroy(e);
    }
  }
  for (void* p : allocations_) (void)rt::deviceFree(p);
}

Status TpEngine::deviceAlloc(std::size_t floats, float** out) {
  void* p = nullptr;
  TP_TRY(rt::deviceMalloc(&p, std::max<std::size_t>(floats, 1) * sizeof(float)));
  allocations_.push_back(p);
  *out = static_cast<float*>(p);
  return Status::Ok();
}

Status TpEngine::allocate() {
  TP_TRY(rt::streamCreate(&compute_));
  TP_TRY(rt::streamCreate(&link_));
  const auto h = static_cast<std::size_t>(model_.hidden);
  const std::size_t local = h / tp_, ffn = model_.ffn() / tp_, vocab = model_.vocab / tp_;
  const auto T = static_cast<std::size_t>(shape_.promptLen);
  const auto len = static_cast<std::size_t>(model_.maxLen);
  int seq0 = 0;
  for (int i = 0; i < shape_.microbatches; ++i) {
    auto m = std::make_unique<MicroBatch>();
    m->seq0 = seq0;
    m->seqs = shape_.batch / shape_.microbatches + (i < shape_.batch % shape_.microbatches);
    seq0 += m->seqs;
    const auto rows = static_cast<std::size_t>(m->seqs) * T;
    const std::size_t cache = model_.layers * static_cast<std::size_t>(m->seqs) * local * len;
    TP_TRY(deviceAlloc(rows * h, &m->x));
    TP_TRY(deviceAlloc(rows * h, &m->xn));
    TP_TRY(deviceAlloc(rows * 3 * local, &m->qkv));
    TP_TRY(deviceAlloc(rows * local, &m->attn));
    TP_TRY(deviceAlloc(T * len, &m->scores));
    TP_TRY(deviceAlloc(rows * h, &m->part));
    if (commType_ != cohort::DataType::kFloat32) {  // 2-byte elements: half the floats
      float* comm = nullptr;
      TP_TRY(deviceAlloc((rows * h + 1) / 2, &comm));
      m->partComm = comm;
    }
    TP_TRY(deviceAlloc(rows * ffn, &m->ffn));
    TP_TRY(deviceAlloc(m->seqs * vocab, &m->logitsLocal));
    TP_TRY(deviceAlloc(m->seqs * vocab * tp_, &m->logitsAll));
    TP_TRY(deviceAlloc(m->seqs * static_cast<std::size_t>(model_.vocab), &m->logits));
    TP_TRY(deviceAlloc(cache, &m->kCache));
    TP_TRY(deviceAlloc(cache, &m->vCache));
    TP_TRY(rt::eventCreate(&m->ready));
    TP_TRY(rt::eventCreate(&m->done));
    micro_.push_back(std::move(m));
  }
  float* tokens = nullptr;
  TP_TRY(deviceAlloc(static_cast<std::size_t>(shape_.batch) * len, &tokens));
  tokens_ = reinterpret_cast<std::int32_t*>(tokens);  // int32 and float are both 4 bytes
  float* stepAt = nullptr;
  TP_TRY(deviceAlloc(1, &stepAt));
  stepAt_ = reinterpret_cast<std::int32_t*>(stepAt);
  const std::size_t steps = len - T + 1;
  if (keepLogits_) TP_TRY(deviceAlloc(steps * shape_.batch * model_.vocab, &history_));
  prompts_.assign(static_cast<std::size_t>(shape_.batch) * len, 0);
  for (int b = 0; b < shape_.batch; ++b) {
    for (int i = 0; i < shape_.promptLen; ++i) {
      prompts_[static_cast<std::size_t>(b) * len + i] = promptToken(b, i, model_.vocab);
    }
  }
  return Status::Ok();
}

namespace {

void drawBar(const std::string& label, int done, int total) {
  constexpr int kWidth = 30;
  const int filled = total > 0 ? done * kWidth / total : kWidth;
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r%-24s [%s] %d/%d tokens", label.c_str(), bar.c_str(), done, total);
  std::fflush(stderr);
}

}  // namespace

Status TpEngine::wait(const std::string& label, bool progress) {
  if (progress && isatty(STDERR_FILENO)) {
    while (rt::streamQuery(compute_).code() == ErrorCode::kNotReady) {
      drawBar(label, stepsDone_.load(), tokensPerSeq_);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    drawBar(label, stepsDone_.load(), tokensPerSeq_);
    std::fprintf(stderr, "\r%*s\r", 80, "");
  }
  TP_TRY(rt::streamSynchronize(compute_));
  return rt::streamSynchronize(link_);
}

Status TpEngine::fetch(std::vector<std::int32_t>* tokens, std::vector<float>* logits) const {
  const auto len = static_cast<std::size_t>(model_.maxLen);
  std::vector<std::int32_t> all(static_cast<std::size_t>(shape_.batch) * len);
  const std::size_t bytes = all.size() * sizeof(std::int32_t);
  TP_TRY(rt::memcpy(all.data(), bytes, tokens_, bytes, rt::MemcpyKind::kDeviceToHost));
  tokens->clear();
  for (int b = 0; b < shape_.batch; ++b) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(b * len + shape_.promptLen);
    tokens->insert(tokens->end(), first, first + tokensPerSeq_);
  }
  if (logits == nullptr || !keepLogits_) return Status::Ok();
  logits->resize(static_cast<std::size_t>(tokensPerSeq_) * shape_.batch * model_.vocab);
  const std::size_t logitBytes = logits->size() * sizeof(float);
  return rt::memcpy(logits->data(), logitBytes, history_, logitBytes,
                    rt::MemcpyKind::kDeviceToHost);
}

}  // namespace tp
