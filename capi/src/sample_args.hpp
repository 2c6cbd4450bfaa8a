// sample_args.hpp: the checks every function that draws tables shares
// (dirmn_sample, dirmn_sample_rowwise, dirmn_power_groups): the sampler's
// range of alpha and of the sizes.
#pragma once

#include <cstdint>
#include <vector>

#include "dirmn.h"

namespace dirmn {
namespace capi {

// Validated, converted alphas (vector j's entry v at alpha[j * cols + v])
// within [kSampleAlphaMin, kSampleAlphaMax]; INVALID_PARAMETER naming the
// first outside (as a row's parameter where rowwise).
dirmn_status check_sample_range(dirmn_context* ctx, const char* fn, bool rowwise,
                                const std::vector<double>& alpha, int64_t cols);

// sizes[b * stride] for b < rows (stride 0: one size) within 0 .. 2^31 - 1;
// INVALID_ARGUMENT naming the row.
dirmn_status check_sample_sizes(dirmn_context* ctx, const char* fn, const int64_t* sizes,
                                int64_t rows, int64_t stride);

}  // namespace capi
}  // namespace dirmn
