// init.hpp: starting responsibilities for a mixture's EM, from the rows'
// proportions. Every draw comes from the seed's random stream, and the
// assignments of rows run in fixed blocks on the host threads, so the same
// seed gives the same start on every backend and thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "../math/random.hpp"
#include "../table/table.hpp"
#include "../thread_pool.hpp"
#include "dirmn.h"

namespace dirmn {

// Rows sampled for the k-means initialisations, and the most rows a split
// fits its two centres to.
constexpr int64_t kInitSample = 4096;

// A row's proportions: its columns with counts, ascending, and their
// shares of the row's total.
struct SparseRow {
  std::vector<uint32_t> idx;
  std::vector<double> p;
  double norm2 = 0.0;
};

// Row b's proportions (it has counts). Throws std::bad_alloc.
SparseRow proportions(const HostTable& t, int64_t b);

// The rows the k-means initialisations iterate on: a uniform sample,
// without replacement (partial Fisher-Yates over the rows with counts, in
// row order, one draw of rng per row taken), of at most kInitSample rows
// with counts, in the order drawn. Throws std::bad_alloc.
std::vector<SparseRow> init_sample(const HostTable& t, math::RandomStream& rng);

// k-means on row proportions: seeds from `init` (random rows, or
// k-means++), Lloyd iterations on the sample (init_sample's, drawn from
// rng just before), then every row of t with counts is assigned to its
// nearest centre. Returns hard responsibilities (rows x k); rows without
// counts get 1/k each. Throws std::bad_alloc.
std::vector<double> kmeans_responsibilities(const HostTable& t, const std::vector<SparseRow>& sample,
                                            int k, dirmn_mixture_init init,
                                            math::RandomStream& rng, HostThreads& threads);

// Soft k-means on row proportions (the sample as above), as
// DirichletMultinomial::dmn initialises its EM: every sampled row starts
// with a random hard label; then, in turn,
// centres become the responsibility-weighted means of the proportions, and
// responsibilities exp(-50 d_j) / sum_i exp(-50 d_i), d_j the Euclidean
// distance to centre j. Every row gets the responsibilities of the final
// centres; rows without counts get 1/k each. Throws std::bad_alloc.
std::vector<double> soft_kmeans_responsibilities(const HostTable& t,
                                                 const std::vector<SparseRow>& sample, int k,
                                                 math::RandomStream& rng, HostThreads& threads);

// The rows a split of component j fits its two centres to: the rows with
// counts and a positive share (z_prev's of j times the row weight, null
// for 1), in row order, or where there are more than kInitSample, the
// kInitSample of the largest shares (ties by row) in that order. Throws
// std::bad_alloc.
struct SplitMembers {
  std::vector<SparseRow> rows;
  std::vector<double> share;
};
SplitMembers split_members(const HostTable& t, int k_prev, const double* z_prev, int j,
                           const double* row_weights);

// Responsibilities for k_prev + 1 components grown from a fit of k_prev
// (z_prev, rows x k_prev): component j's share of each row goes either to
// j or to a new last component, by 2-means on the rows' proportions
// (the members', weighted by their shares), seeded at the row farthest
// from j's mean and the row farthest from that one. Rows without counts
// get 1/k each. Throws std::bad_alloc.
std::vector<double> split_responsibilities(const HostTable& t, int k_prev, const double* z_prev,
                                           int j, const SplitMembers& members, HostThreads& threads);

}  // namespace dirmn
