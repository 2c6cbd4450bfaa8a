// newton.hpp: the safeguards of Newton's method on log alpha, the same in
// the host's fit (models/fit.cpp) and the device's M-step fits
// (cuda/mstep.cu), so that both take the same steps.
#pragma once

namespace dirmn {
namespace math {

// The largest change of one log alpha in one step: a step beyond it is
// scaled down to it (far from the optimum a full Newton step can jump many
// orders of magnitude, past where the quadratic model means anything).
constexpr double kMaxLogStep = 5.0;
// Step halvings tried before the fit falls back to Minka's fixed point.
constexpr int kMaxHalvings = 40;

}  // namespace math
}  // namespace dirmn
