// init_ranks.hpp: a mixture's initialisations on a table split by rows over
// a communicator's ranks. Every initialisation fits its centres to a few
// thousand rows (init.hpp) and then assigns each row on its own; so the
// ranks agree on those rows -- the ones one process holding every rank's
// rows, in rank order, would have taken -- send them to each other, and
// each rank then computes the same centres and assigns its own rows.
//
// Each function is a phase of a collective call (ranks.hpp): it opens with
// a vote on `local`, and every rank must call it at the same point.
#pragma once

#include <vector>

#include "../comm.hpp"
#include "init.hpp"

namespace dirmn {

// init_sample of the whole table, on every rank: the same draws of rng and
// the same rows in the same order. Throws nothing (memory is voted).
BackendResult init_sample_over_ranks(Collective& c, BackendResult local, const HostTable& t,
                                     math::RandomStream& rng, std::vector<SparseRow>* out);

// split_members of the whole table, on every rank (z_prev and row_weights
// this rank's rows'). Throws nothing.
BackendResult split_members_over_ranks(Collective& c, BackendResult local, const HostTable& t,
                                       int k_prev, const double* z_prev, int j,
                                       const double* row_weights, SplitMembers* out);

}  // namespace dirmn
