// init.hpp: starting responsibilities for a mixture's EM, from the rows'
// proportions. Every draw comes from the seed's random stream, and the
// assignments of rows run in fixed blocks on the host threads, so the same
// seed gives the same start on every backend and thread count.
#pragma once

#include <vector>

#include "../math/random.hpp"
#include "../table/table.hpp"
#include "../thread_pool.hpp"
#include "dirmn.h"

namespace dirmn {

// k-means on row proportions: seeds from `init` (random rows, or
// k-means++), Lloyd iterations on a sample of rows, then every row with
// counts is assigned to its nearest centre. Returns hard responsibilities
// (rows x k); rows without counts get 1/k each. Throws std::bad_alloc.
std::vector<double> kmeans_responsibilities(const HostTable& t, int k, dirmn_mixture_init init,
                                            math::RandomStream& rng, HostThreads& threads);

// Soft k-means on row proportions, as DirichletMultinomial::dmn initialises
// its EM: every sampled row starts with a random hard label; then, in turn,
// centres become the responsibility-weighted means of the proportions, and
// responsibilities exp(-50 d_j) / sum_i exp(-50 d_i), d_j the Euclidean
// distance to centre j. Every row gets the responsibilities of the final
// centres; rows without counts get 1/k each. Throws std::bad_alloc.
std::vector<double> soft_kmeans_responsibilities(const HostTable& t, int k,
                                                 math::RandomStream& rng, HostThreads& threads);

// Responsibilities for k_prev + 1 components grown from a fit of k_prev
// (z_prev, rows x k_prev): component j's share of each row goes either to
// j or to a new last component, by 2-means on the rows' proportions
// (weighted by their share of j times their row weight; row_weights null
// for 1), seeded at the row farthest from j's mean and the row farthest
// from that one. Rows without counts get 1/k each. Throws std::bad_alloc.
std::vector<double> split_responsibilities(const HostTable& t, int k_prev, const double* z_prev,
                                           int j, const double* row_weights, HostThreads& threads);

}  // namespace dirmn
