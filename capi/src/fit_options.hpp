// fit_options.hpp: dirmn_fit_options taken and checked once, for every
// entry point that fits a single alpha (dirmn_fit, dirmn_overdispersion_test).
#pragma once

#include "../../kernels/models/fit.hpp"
#include "dirmn.h"

namespace dirmn {
namespace capi {

// Copies *options (NULL: defaults) into *o and checks it against the
// table: tolerance, max_iterations, flags, start and hessian_diag (their
// extents, and the start's values; with_start false drops both), the
// weights. Fills *settings from it (threads and weights are the caller's).
dirmn_status fit_settings(dirmn_context* ctx, const char* fn, const dirmn_counts* counts,
                          const dirmn_fit_options* options, bool with_start, dirmn_fit_options* o,
                          FitSettings* settings);

}  // namespace capi
}  // namespace dirmn
