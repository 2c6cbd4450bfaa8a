// args.hpp: the argument checks every section of the C ABI shares --
// handles, strides and layouts, parameter vectors, row weights, options
// structs -- each written once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dirmn.h"

namespace dirmn {
struct BackendResult;
namespace capi {

// The counts object is non-null and was made by ctx.
dirmn_status check_counts_use(dirmn_context* ctx, const char* fn, const dirmn_counts* counts);

// A caller's strided array: element (i, j) of n1 x n2 elements of
// `elem_bytes` each is at base + (i s1 + j s2) elem_bytes (a dimension of 1
// ignores its stride). Every offset the library forms into it is checked
// here first, in bytes: the last element's byte offset must fit in
// ptrdiff_t and base plus it must not wrap the address space (an element
// stride of 2^61 of 8-byte counts wraps to the base pointer itself).
struct Strided {
  const void* base;
  int64_t n1, n2, s1, s2;
  size_t elem_bytes;
};

// Checks an array that is read (output = false: strides >= 1, offsets
// that fit) or written (as read, and never one element twice: row- or
// column-major, each with a leading dimension). DIRMN_SUCCESS, or a
// message naming `what` (the argument: "params", "out", ...) with
// INVALID_ARGUMENT for a stride below 1 or an overlap, OVERFLOW for
// offsets beyond a pointer's reach.
dirmn_status check_extent(dirmn_context* ctx, const char* fn, const char* what, const Strided& a,
                          bool output);

// n contiguous elements of elem_bytes from base (n >= 0): a 1 x n array.
inline Strided contiguous(const void* base, int64_t n, size_t elem_bytes) {
  return Strided{base, 1, n, 1, 1, elem_bytes};
}

// A flag naming the caller's device memory (DIRMN_OUTPUT_DEVICE,
// DIRMN_PARAMS_DEVICE, DIRMN_WEIGHTS_DEVICE): NOT_SUPPORTED, naming it,
// unless ctx is a CUDA context.
dirmn_status require_device_context(dirmn_context* ctx, const char* fn, const char* flag);

// A backend's failed check or copy of the caller's device array `what`
// (given as device memory by `flag`): INVALID_ARGUMENT where it is not
// memory of the context's device, else the backend's failure.
dirmn_status fail_device_array(dirmn_context* ctx, const char* fn, const BackendResult& r,
                               const char* what, const char* flag);

// An input in the caller's device memory (DIRMN_PARAMS_DEVICE,
// DIRMN_WEIGHTS_DEVICE; `a` already checked by check_extent): copies the
// span of its elements to *copy, in the order of the context's stream, and
// sets *host to where the caller's pointer lands in the copy, so the host
// checks and conversions read it with the caller's strides. NOT_SUPPORTED
// on a CPU context (naming `flag`); INVALID_ARGUMENT where `what` is not
// device memory of the context's device; OUT_OF_MEMORY; DEVICE.
dirmn_status stage_device_input(dirmn_context* ctx, const char* fn, const char* what,
                                const char* flag, const Strided& a, std::vector<double>* copy,
                                const double** host);

// Validates n_vec parameter vectors of length v (vector j, element i at
// params[j * sj + i * si]) and writes alpha into dst contiguously. Rows of
// per-row parameters (rowwise) are named as rows.
dirmn_status convert_params(dirmn_context* ctx, const char* fn, bool rowwise, const double* params,
                            int64_t n_vec, int64_t v, int64_t sj, int64_t si, dirmn_param param,
                            double* dst);

// Validates the parameter kind.
dirmn_status check_param_kind(dirmn_context* ctx, const char* fn, dirmn_param param);

// The likelihood flags: bits outside DIRMN_FULL | DIRMN_KERNEL | `others`
// and DIRMN_FULL with DIRMN_KERNEL are INVALID_ARGUMENT; *full is whether
// the log pmf (the default) is asked for.
dirmn_status likelihood_flags(dirmn_context* ctx, const char* fn, const char* what, uint32_t flags,
                              uint32_t others, bool* full);

// Validates row weights (finite, >= 0), naming the first bad row; null is
// valid (all 1).
dirmn_status check_weights(dirmn_context* ctx, const char* fn, const double* w, int64_t rows);

// The estimators' sums are computed on the weights scaled to a largest of
// about 1 (models/weights.hpp), and come back times that scale: where the
// weighted sum itself is beyond the largest double, OVERFLOW, naming
// `what`.
dirmn_status fail_weighted_overflow(dirmn_context* ctx, const char* fn, const char* what);

// Copies a caller's size-prefixed options struct over the defaults in *out:
// the fields wholly within the caller's size (whole_fields); the rest keep
// their defaults -- a size that ends inside a pointer must not leave half a
// pointer behind. INVALID_ARGUMENT when the size cannot even hold itself.
template <class T>
dirmn_status copy_options(dirmn_context* ctx, const char* fn, const T* options, const char* init,
                          T* out);

// The bytes from the start of T up to the end of its last field that ends
// at or before `size`.
size_t whole_fields(const dirmn_fit_options*, size_t size);
size_t whole_fields(const dirmn_mixture_options*, size_t size);
size_t whole_fields(const dirmn_reg_options*, size_t size);
size_t whole_fields(const dirmn_sample_options*, size_t size);
size_t whole_fields(const dirmn_group_test_options*, size_t size);
size_t whole_fields(const dirmn_power_options*, size_t size);

// The shared parameter vectors dirmn_loglik last validated and converted,
// kept bit for bit with what they became: evaluating one alpha again (a
// fitted model scoring several tables, a benchmark loop) then skips the
// validation and the exp of every entry. Each conversion gets a new
// version, which tells the backend whether the tables it made from alpha
// are still current.
struct ParamMemo {
  std::vector<double> input;  // the caller's values, vector-major (k x v)
  std::vector<double> alpha;  // their alphas, same layout
  dirmn_param kind = DIRMN_PARAM_ALPHA;
  int64_t n_vec = 0, v = 0;
  bool valid = false;
  uint64_t version = 0;

  // True when params (vector j, entry i at params[j * sj + i * si]) are,
  // bit for bit and of the same kind, the ones `alpha` was made from.
  bool matches(const double* params, int64_t n_vec_, int64_t v_, int64_t sj, int64_t si,
               dirmn_param kind_) const;
  // Records params as the source of `alpha` (valid on return; invalid and
  // returning false if the copy cannot be allocated).
  bool remember(const double* params, int64_t n_vec_, int64_t v_, int64_t sj, int64_t si,
                dirmn_param kind_);
};

// *_init_sized: the first `size` bytes of *options from `defaults`, with
// options->size the bytes written (no more than sizeof(T)); nothing for a
// null pointer or a size that cannot hold the size field.
template <class T>
void fill_defaults(T* options, size_t size, T defaults) {
  if (options == nullptr || size < sizeof(size_t)) return;
  const size_t n = std::min(size, sizeof(T));
  defaults.size = n;
  std::memcpy(options, &defaults, n);
}

// ---- template definitions --------------------------------------------------

dirmn_status fail_options_size(dirmn_context* ctx, const char* fn, size_t size, const char* init);

template <class T>
dirmn_status copy_options(dirmn_context* ctx, const char* fn, const T* options, const char* init,
                          T* out) {
  if (options == nullptr) return DIRMN_SUCCESS;
  if (options->size < sizeof(size_t)) return fail_options_size(ctx, fn, options->size, init);
  std::memcpy(out, options, whole_fields(out, std::min(options->size, sizeof(T))));
  out->size = sizeof(T);
  return DIRMN_SUCCESS;
}

}  // namespace capi
}  // namespace dirmn
