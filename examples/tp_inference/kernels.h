// The decoder's math on row-major float matrices in (emulated) device memory.
// These functions run inside stream kernels; matrix products go to OpenBLAS.
// All are pure functions of their arguments (thread-safe on disjoint outputs).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tp {

/// c[m x n] = alpha * a[m x k] * b[k x n] (+ beta * c), row-major, with leading
/// dimensions; transB uses b as [n x k] (b transposed).
void gemm(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
          bool transB, float beta, float* c, int ldc);

/// out[r] = x[r] / rms(x[r]) * gain, for `rows` rows of `n`; rows of x are `ldx` apart.
void rmsNorm(const float* x, int ldx, const float* gain, float* out, int rows, int n);

/// x = gelu(x), the tanh approximation.
void gelu(float* x, std::size_t n);

/// x += y.
void addInPlace(float* x, const float* y, std::size_t n);

/// x[s*T + t] = embed[tokens[s*stride + p0 + t]] + position[p0 + t].
void embedTokens(const std::int32_t* tokens, int stride, int seqs, int p0, int T,
                 const float* embed, const float* position, int hidden, float* x);

/// Where one step's attention works: `seqs` sequences of T new tokens at
/// positions p0..p0+T-1, `heads` local heads of `headDim`, a cache of `maxLen`.
struct AttentionShape {
  int seqs;
  int T;
  int p0;
  int heads;
  int headDim;
  int maxLen;
};

/// Causal multi-head attention with a KV cache. qkv rows are [q | k | v] of the
/// local heads; the new k, v go into the caches ([seq][head][maxLen][headDim]);
/// `scores` holds T * (p0 + T) floats; out rows are [heads * headDim].
void attention(const AttentionShape& shape, const float* qkv, float* kCache, float* vCache,
               float* scores, float* out);

/// Index of the largest of n values (the lowest index on ties).
int argmax(const float* x, int n);

}  // namespace tp
