// tables.hpp: what makes a counts handle from a validated host table,
// shared by the Counts section and the tables the library draws itself
// (sample.cpp).
#pragma once

#include <cstdint>

#include "../../kernels/table/table.hpp"
#include "dirmn.h"

namespace dirmn {
namespace capi {

// Hands a validated host table to the context's backend and makes the
// handle (*out, on success only). On a device the device copies the table
// and the context's CPU backend then takes it over. CANCELLED (the
// interrupt, polled first), OUT_OF_MEMORY, DEVICE, each with its message.
dirmn_status adopt_table(dirmn_context* ctx, const char* fn, HostTable&& table, uint32_t flags,
                         dirmn_counts** out);

}  // namespace capi
}  // namespace dirmn
