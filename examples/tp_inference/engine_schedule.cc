// One greedy generation as a schedule of kernels (compute stream) and
// collectives (link stream), ordered by events only.
//
// Per step and layer, for each micro-batch m in turn: the attention block ends in
// the row-parallel output projection, whose partial sums are allreduced; the MLP
// block first adds that result (waiting for the allreduce of m only), then ends in
// the row-parallel second linear, allreduced again. While the allreduce of m runs
// on the link stream, the compute stream is already busy with micro-batch m + 1.
#include <fmt/format.h>

#include <cstring>

#include "tp_inference/engine.h"
#include "tp_inference/kernels.h"

namespace tp {

namespace rt = cohort::runtime;
using cohort::ErrorCode;
using cohort::Status;

Status TpEngine::launch(std::function<void()> body) {
  return rt::launchKernel(compute_, [this, body = std::move(body)](rt::Stream*) {
    const double begin = nowSeconds();
    body();
    computeTimes_.push_back({begin, nowSeconds()});
    return Status::Ok();
  });
}

Status TpEngine::communicate(MicroBatch& m, bool gather, std::size_t count) {
  if (comm_ == nullptr) return Status::Ok();
  TP_TRY(rt::eventRecord(m.ready, compute_));
  TP_TRY(rt::streamWaitEvent(link_, m.ready));
  TP_TRY(rt::launchKernel(link_, [this](rt::Stream*) {
    commBegin_ = nowSeconds();
    return Status::Ok();
  }));
  TP_TRY(gather ? comm_->allGather(m.logitsLocal, m.logitsAll, count, cohort::DataType::kFloat32,
                                   link_)
                : allReduceParts(m, count));
  TP_TRY(rt::launchKernel(link_, [this](rt::Stream*) {
    commTimes_.push_back({commBegin_, nowSeconds()});
    return Status::Ok();
  }));
  TP_TRY(rt::eventRecord(m.done, link_));
  // Without overlap the compute stream stops until this collective is done.
  return overlapRun_ ? Status::Ok() : rt::streamWaitEvent(compute_, m.done);
}

// The partial sums, summed over the ranks in commType_. A 16-bit type is converted
// from fp32 on the link stream, just before the allreduce, and back just after it:
// only the communication sees the narrower type, and its time counts as
// communication.
Status TpEngine::allReduceParts(MicroBatch& m, std::size_t count) {
  if (commType_ == cohort::DataType::kFloat32) {
    return comm_->allReduce(m.part, m.part, count, commType_, cohort::ReduceOp::kSum, link_);
  }
  const cohort::DataType type = commType_;
  TP_TRY(rt::launchKernel(link_, [&m, count, type](rt::Stream*) {
    return cohort::convertElements(m.part, cohort::DataType::kFloat32, m.partComm, type, count);
  }));
  TP_TRY(comm_->allReduce(m.partComm, m.partComm, count, type, cohort::ReduceOp::kSum, link_));
  return rt::launchKernel(link_, [&m, count, type](rt::Stream*) {
    return cohort::convertElements(m.partComm, type, m.part, cohort::DataType::kFloat32, count);
  });
}

Status TpEngine::consume(MicroBatch& m) {
  return comm_ == nullptr ? Status::Ok() : rt::streamWaitEvent(compute_, m.done);
}

Status TpEngine::enqueueGenerate(int tokens, bool overlap, bool replay) {
  if (tokens < 1 || shape_.promptLen + tokens > model_.maxLen) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("generate: {} tokens after a prompt of {} do not fit a cache of {}",
                              tokens, shape_.promptLen, model_.maxLen));
  }
  // The streams are idle (the previous generation was waited for): reset.
  tokensPerSeq_ = tokens;
  overlapRun_ = overlap;
  stepsDone_ = 0;
  computeTimes_.clear();
  commTimes_.clear();
  issueSeconds_.clear();
  if (replay && tokens > 1) TP_TRY(captureDecodeStep());
  const std::size_t bytes = prompts_.size() * sizeof(std::int32_t);
  TP_TRY(rt::memcpyAsync(tokens_, bytes, prompts_.data(), bytes, rt::MemcpyKind::kHostToDevice,
                         compute_));
  TP_TRY(enqueueStep(StepRef{0, nullptr}, shape_.promptLen));
  if (replay && tokens > 1) {
    static const std::int32_t kFirstDecodeStep = 1;
    TP_TRY(rt::memcpyAsync(stepAt_, sizeof(std::int32_t), &kFirstDecodeStep,
                           sizeof(std::int32_t), rt::MemcpyKind::kHostToDevice, compute_));
  }
  for (int step = 1; step < tokens; ++step) {
    const double begin = nowSeconds();
    TP_TRY(replay ? rt::modelLaunch(replay_[overlap], compute_)
                  : enqueueStep(StepRef{step, nullptr}, 1));
    issueSeconds_.push_back(nowSeconds() - begin);
  }
  return Status::Ok();
}

// The capture records what enqueueStep queues on both streams (the link stream
// joins it through the first event it waits on, and every collective's done
// event is waited on by the compute stream before the step's end), plus the
// kernel that moves the step on.
Status TpEngine::captureDecodeStep() {
  rt::Model*& model = replay_[overlapRun_ ? 1 : 0];
  if (model != nullptr) return Status::Ok();
  TP_TRY(rt::captureBegin(compute_, rt::CaptureMode::kThreadLocal));
  Status queued = enqueueStep(StepRef{0, stepAt_}, 1);
  if (queued.ok()) {
    queued = rt::launchKernel(compute_, [this](rt::Stream*) {
      ++*stepAt_;
      return Status::Ok();
    });
  }
  rt::Model* captured = nullptr;
  const Status ended = rt::captureEnd(compute_, &captured);
  if (!queued.ok() || !ended.ok()) {
    if (captured != nullptr) (void)rt::modelDestroy(captured);
    return queued.ok() ? ended : queued;
  }
  model = captured;
  return Status::Ok();
}

Status TpEngine::enqueueStep(StepRef step, int T) {
  const std::size_t h = model_.hidden;
  for (auto& m : micro_) {
    TP_TRY(launch([this, &m = *m, step, T] {
      embedTokens(tokens_ + static_cast<std::size_t>(m.seq0) * model_.maxLen, model_.maxLen, m.seqs,
                  positionOf(step.get()), T, weights_->embed, weights_->position, model_.hidden,
                  m.x);
    }));
  }
  for (int l = 0; l < model_.layers; ++l) {
    for (auto& m : micro_) {
      if (l > 0) TP_TRY(consume(*m));
      TP_TRY(launch([this, &m = *m, l, step, T] { attentionBlock(m, l, T, positionOf(step.get())); }));
      TP_TRY(communicate(*m, false, m->seqs * T * h));
    }
    for (auto& m : micro_) {
      TP_TRY(consume(*m));
      TP_TRY(launch([this, &m = *m, l, T] { mlpBlock(m, l, T); }));
      TP_TRY(communicate(*m, false, m->seqs * T * h));
    }
  }
  for (auto& m : micro_) {
    TP_TRY(consume(*m));
    TP_TRY(launch([this, &m = *m, T] { headBlock(m, T); }));
    TP_TRY(communicate(*m, true, static_cast<std::size_t>(m->seqs) * (model_.vocab / tp_)));
  }
  for (auto& m : micro_) {
    TP_TRY(consume(*m));
    TP_TRY(launch([this, &m = *m, step] { sample(m, step.get()); }));
  }
  return Status::Ok();
}

void TpEngine::attentionBlock(MicroBatch& m, int layer, int T, int p0) {
  const LayerWeights& w = weights_->layers[static_cast<std::size_t>(layer)];
  const int h = model_.hidden, local = h / tp_, rows = m.seqs * T;
  if (layer > 0) addInPlace(m.x, m.part, static_cast<std::size_t>(rows) * h);  // MLP residual
  rmsNorm(m.x, h, w.norm1, m.xn, rows, h);
  gemm(rows, 3 * local, h, 1.0f, m.xn, h, w.wqkv, 3 * local, false, 0.0f, m.qkv, 3 * local);
  const AttentionShape shape{m.seqs, T, p0, model_.heads / tp_, model_.headDim(), model_.maxLen};
  const std::size_t cache = static_cast<std::size_t>(layer) * m.seqs * local * model_.maxLen;
  attention(shape, m.qkv, m.kCache + cache, m.vCache + cache, m.scores, m.attn);
  gemm(rows, h, local, 1.0f, m.attn, local, w.wo, h, false, 0.0f, m.part, h);
}

void TpEngine::mlpBlock(MicroBatch& m, int layer, int T) {
  const LayerWeights& w = weights_->layers[static_cast<std::size_t>(layer)];
  const int h = model_.hidden, ffn = model_.ffn() / tp_, rows = m.seqs * T;
  addInPlace(m.x, m.part, static_cast<std::size_t>(rows) * h);  // attention residual
  rmsNorm(m.x, h, w.norm2, m.xn, rows, h);
  gemm(rows, ffn, h, 1.0f, m.xn, h, w.w1, ffn, false, 0.0f, m.ffn, ffn);
  gelu(m.ffn, static_cast<std::size_t>(rows) * ffn);
  gemm(rows, h, ffn, 1.0f, m.ffn, ffn, w.w2, h, false, 0.0f, m.part, h);
}

void TpEngine::headBlock(MicroBatch& m, int T) {
  const int h = model_.hidden, vocab = model_.vocab / tp_, rows = m.seqs * T;
  addInPlace(m.x, m.part, static_cast<std::size_t>(rows) * h);
  // Only each sequence's last position predicts the next token.
  rmsNorm(m.x + static_cast<std::size_t>(T - 1) * h, T * h, weights_->finalNorm, m.xn, m.seqs, h);
  gemm(m.seqs, vocab, h, 1.0f, m.xn, h, weights_->wout, vocab, false, 0.0f, m.logitsLocal, vocab);
}

void TpEngine::sample(MicroBatch& m, int step) {
  const int vocab = model_.vocab, shard = vocab / tp_;
  const float* gathered = comm_ == nullptr ? m.logitsLocal : m.logitsAll;
  for (int s = 0; s < m.seqs; ++s) {
    float* row = m.logits + static_cast<std::size_t>(s) * vocab;
    for (int r = 0; r < tp_; ++r) {  // rank r's vocabulary slice of sequence s
      std::memcpy(row + static_cast<std::size_t>(r) * shard,
                  gathered + (static_cast<std::size_t>(r) * m.seqs + s) * shard,
                  sizeof(float) * shard);
    }
    const int seq = m.seq0 + s;
    tokens_[static_cast<std::size_t>(seq) * model_.maxLen + shape_.promptLen + step] =
        argmax(row, vocab);
    if (keepLogits_) {
      std::memcpy(history_ + (static_cast<std::size_t>(step) * shape_.batch + seq) * vocab, row,
                  sizeof(float) * vocab);
    }
  }
  if (&m == micro_.back().get()) ++stepsDone_;
}

}  // namespace tp
