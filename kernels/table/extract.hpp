// extract.hpp: a stored host table's cells copied out as doubles, with its
// columns rearranged -- the grouped regression's per-group tables.
#pragma once

#include <cstdint>

#include "table.hpp"

namespace dirmn {

// out[b * out_cols + slot[v]] = n_bv for every nonzero cell whose column
// has slot[v] >= 0; other entries of out are left as they are (the caller
// zeroes them).
void scatter_columns(const HostTable& t, const int64_t* slot, int64_t out_cols, double* out);

}  // namespace dirmn
