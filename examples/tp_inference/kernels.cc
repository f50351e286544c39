#include "tp_inference/kernels.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tp {

void gemm(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
          bool transB, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, transB ? CblasTrans : CblasNoTrans, m, n, k, alpha, a,
              lda, b, ldb, beta, c, ldc);
}

void rmsNorm(const float* x, int ldx, const float* gain, float* out, int rows, int n) {
  for (int r = 0; r < rows; ++r) {
    const float* in = x + static_cast<std::size_t>(r) * ldx;
    float* o = out + static_cast<std::size_t>(r) * n;
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += static_cast<double>(in[i]) * in[i];
    const float inv = static_cast<float>(1.0 / std::sqrt(sum / n + 1e-6));
    for (int i = 0; i < n; ++i) o[i] = in[i] * inv * gain[i];
  }
}

void gelu(float* x, std::size_t n) {
  constexpr float kC = 0.7978845608f;  // sqrt(2 / pi)
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    x[i] = 0.5f * v * (1.0f + std::tanh(kC * (v + 0.044715f * v * v * v)));
  }
}

void addInPlace(float* x, const float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}

void embedTokens(const std::int32_t* tokens, int stride, int seqs, int p0, int T,
                 const float* embed, const float* position, int hidden, float* x) {
  for (int s = 0; s < seqs; ++s) {
    for (int t = 0; t < T; ++t) {
      const std::int32_t token = tokens[static_cast<std::size_t>(s) * stride + p0 + t];
      const float* e = embed + static_cast<std::size_t>(token) * hidden;
      const float* p = position + static_cast<std::size_t>(p0 + t) * hidden;
      float* row = x + (static_cast<std::size_t>(s) * T + t) * hidden;
      for (int i = 0; i < hidden; ++i) row[i] = e[i] + p[i];
    }
  }
}

namespace {

// Masks the future (j > p0 + t), then a numerically stable softmax per row.
void causalSoftmax(float* scores, int T, int len, int p0) {
  for (int t = 0; t < T; ++t) {
    float* row = scores + static_cast<std::size_t>(t) * len;
    const int valid = p0 + t + 1;
    const float top = *std::max_element(row, row + valid);
    double sum = 0;
    for (int j = 0; j < valid; ++j) sum += (row[j] = std::exp(row[j] - top));
    const float inv = static_cast<float>(1.0 / sum);
    for (int j = 0; j < valid; ++j) row[j] *= inv;
    std::fill(row + valid, row + len, 0.0f);
  }
}

}  // namespace

void attention(const AttentionShape& a, const float* qkv, float* kCache, float* vCache,
               float* scores, float* out) {
  const int width = a.heads * a.headDim;  // one of q, k, v in a qkv row
  const int len = a.p0 + a.T;
  const float scale = 1.0f / std::sqrt(static_cast<float>(a.headDim));
  const std::size_t headBytes = sizeof(float) * a.headDim;
  for (int s = 0; s < a.seqs; ++s) {
    for (int h = 0; h < a.heads; ++h) {
      const std::size_t cache = (static_cast<std::size_t>(s) * a.heads + h) * a.maxLen * a.headDim;
      const float* rows = qkv + static_cast<std::size_t>(s) * a.T * 3 * width;
      for (int t = 0; t < a.T; ++t) {
        const float* row = rows + static_cast<std::size_t>(t) * 3 * width + h * a.headDim;
        const std::size_t at = cache + static_cast<std::size_t>(a.p0 + t) * a.headDim;
        std::memcpy(kCache + at, row + width, headBytes);
        std::memcpy(vCache + at, row + 2 * width, headBytes);
      }
      // scores[T x len] = q K^T / sqrt(d); out[T x d] = softmax(scores) V.
      gemm(a.T, len, a.headDim, scale, rows + h * a.headDim, 3 * width, kCache + cache, a.headDim,
           true, 0.0f, scores, len);
      causalSoftmax(scores, a.T, len, a.p0);
      gemm(a.T, a.headDim, len, 1.0f, scores, len, vCache + cache, a.headDim, false, 0.0f,
           out + static_cast<std::size_t>(s) * a.T * width + h * a.headDim, width);
    }
  }
}

int argmax(const float* x, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return best;
}

}  // namespace tp
