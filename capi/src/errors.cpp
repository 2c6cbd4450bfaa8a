// errors.cpp: recording and wording failures.
#include "errors.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "handles.hpp"

namespace dirmn {
namespace capi {
namespace {

// Failures before a context exists, per thread. A plain array: thread_local
// objects with destructors register them (allocating) on first use.
thread_local ErrorSlot t_slot;
static_assert(std::is_trivially_destructible<ErrorSlot>::value,
              "a thread's first failure must not register a destructor (that allocates)");

// Appends printf output at `*at` (truncating at the end of the buffer).
void append_v(ErrorSlot& s, size_t* at, const char* fmt, va_list ap) {
  if (*at >= ErrorSlot::kMessageBytes - 1) return;
  const int n = std::vsnprintf(s.message + *at, ErrorSlot::kMessageBytes - *at, fmt, ap);
  if (n < 0) return;
  *at = std::min(ErrorSlot::kMessageBytes - 1, *at + static_cast<size_t>(n));
}

void append(ErrorSlot& s, size_t* at, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void append(ErrorSlot& s, size_t* at, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  append_v(s, at, fmt, ap);
  va_end(ap);
}

// The position of `w` in words, and what separates it from the detail.
void append_position(ErrorSlot& s, size_t* at, const Where& w) {
  switch (w.form) {
    case Where::kNone: return;
    case Where::kCell:
      append(s, at, "row %" PRId64 ", column %" PRId64 " (0-based): ", w.row, w.column);
      return;
    case Where::kParam:
      append(s, at, "vector %" PRId64 ", index %" PRId64 " (0-based): ", w.vector, w.index);
      return;
    case Where::kRowParam:
      append(s, at, "row %" PRId64 ", index %" PRId64 " (0-based): ", w.row, w.index);
      return;
    case Where::kVector: append(s, at, "vector %" PRId64 " (0-based): ", w.vector); return;
    case Where::kRow: append(s, at, "row %" PRId64 " (0-based): ", w.row); return;
    case Where::kNamedIndex:
      append(s, at, "%s index %" PRId64 " (0-based): ", w.argument, w.index);
      return;
    case Where::kBracket: append(s, at, "%s[%" PRId64 "] ", w.argument, w.index); return;
    case Where::kEntry:
      if (w.row >= 0)
        append(s, at, "entry %" PRId64 " (row %" PRId64 "): ", w.index, w.row);
      else
        append(s, at, "entry %" PRId64 " (column %" PRId64 "): ", w.index, w.column);
      return;
  }
}

// Why a count is refused, in words.
const char* count_issue_text(CountIssue issue) {
  switch (issue) {
    case kCountNaN: return "is NaN";
    case kCountInf: return "is infinite";
    case kCountNegative: return "is negative";
    case kCountTooLarge: return "is 2^53 or more (counts must be below 2^53)";
    case kCountNotInteger: return "is not an integer";
    case kRowTotalTooLarge:
      return "takes the row's total to 2^53 or more (row totals must be below 2^53)";
    case kCountOk: break;
  }
  return "is invalid";
}

dirmn_status record(const dirmn_context* ctx, dirmn_status status, const char* fn,
                    const Where& where, const char* fmt, va_list ap) {
  ErrorSlot& s = slot_of(ctx);
  s.where = where;
  size_t at = 0;
  append(s, &at, "%s: ", fn);
  append_position(s, &at, where);
  s.detail_at = at;
  append_v(s, &at, fmt, ap);
  s.message[at] = '\0';
  return status;
}

}  // namespace

ErrorSlot& slot_of(const dirmn_context* ctx) {
  return ctx != nullptr ? const_cast<dirmn_context*>(ctx)->error : t_slot;
}

void clear_error(const dirmn_context* ctx) { slot_of(ctx).clear(); }

const char* value_text(double x, char* buf) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Inf" : "-Inf";
  // The fewest digits that read back as x: -0.1, not -0.10000000000000001.
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, kValueChars, "%.*g", digits, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

dirmn_status fail(dirmn_context* ctx, dirmn_status status, const char* fn, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(ctx, status, fn, Where(), fmt, ap);
  va_end(ap);
  return status;
}

dirmn_status fail_at(dirmn_context* ctx, dirmn_status status, const char* fn, const Where& where,
                     const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(ctx, status, fn, where, fmt, ap);
  va_end(ap);
  return status;
}

dirmn_status prefix_failure(dirmn_context* ctx, dirmn_status status, const char* fn,
                            const char* fmt, ...) {
  ErrorSlot& s = slot_of(ctx);
  char before[ErrorSlot::kMessageBytes];
  std::memcpy(before, s.message, sizeof before);
  const size_t detail_at = s.detail_at;
  size_t at = 0;
  append(s, &at, "%s: ", fn);
  va_list ap;
  va_start(ap, fmt);
  append_v(s, &at, fmt, ap);
  va_end(ap);
  append(s, &at, ": ");
  const size_t shift = at;
  append(s, &at, "%s", before);
  s.message[at] = '\0';
  s.detail_at = std::min(detail_at + shift, at);
  return status;
}

dirmn_status fail_backend(dirmn_context* ctx, const char* fn, const BackendResult& r) {
  switch (r.status) {
    case DIRMN_ERROR_CANCELLED: return fail(ctx, r.status, fn, "cancelled by the interrupt callback");
    case DIRMN_ERROR_OUT_OF_MEMORY: return fail(ctx, r.status, fn, "out of memory (%s)", r.what);
    case DIRMN_ERROR_DEVICE: return fail(ctx, r.status, fn, "CUDA error %d in %s", r.code, r.what);
    case DIRMN_ERROR_COMMUNICATION:
      // comm.hpp: a callback by name and what it returned, or the first
      // rank whose part failed.
      if (r.what[0] != '\0')
        return fail(ctx, r.status, fn, "the communicator's %s callback returned %d", r.what, r.code);
      return fail(ctx, r.status, fn,
                  "rank %d's part of this collective call failed (its message is on that rank)",
                  r.code);
    default:
      return fail(ctx, r.status, fn, "%s%s%s", dirmn_status_string(r.status), r.what[0] ? ": " : "",
                  r.what);
  }
}

dirmn_status fail_counts(dirmn_context* ctx, const char* fn, dirmn_status status,
                         const CountsProblem& p, int64_t rows, int64_t cols) {
  char v[kValueChars];
  switch (p.kind) {
    case CountsProblem::kBadCount: {
      // An integer count as the caller wrote it: as a double 2^53 + 1
      // would read 2^53, and INT64_MAX 9.2233720368547758e+18.
      Where w = Where::cell("data", p.row, p.col);
      const char* text = v;
      if (p.integer) {
        w.with_integer(p.integer_value);
        std::snprintf(v, sizeof v, "%" PRId64, p.integer_value);
      } else {
        w.with_value(p.value);
        text = value_text(p.value, v);
      }
      if (p.issue == kCountNotInteger)
        return fail_at(ctx, status, fn, w,
                       "count %s is not an integer (set DIRMN_COUNTS_REAL_VALUED for real-valued counts)",
                       text);
      return fail_at(ctx, status, fn, w, "count %s %s", text, count_issue_text(p.issue));
    }
    case CountsProblem::kBadIndex: {
      const int64_t inner = p.csc ? rows : cols;
      Where w = p.csc ? Where::entry("indices", p.entry, -1, p.outer)
                      : Where::entry("indices", p.entry, p.outer, -1);
      w.with_integer(p.index_value);
      // In the caller's numbering (DIRMN_COUNTS_ONE_BASED: from 1).
      if (p.index_base != 0)
        return fail_at(ctx, status, fn, w, "%s index %" PRId64 " is outside [1, %" PRId64 "]",
                       p.csc ? "row" : "column", p.index_value, inner);
      return fail_at(ctx, status, fn, w, "%s index %" PRId64 " is outside [0, %" PRId64 ")",
                     p.csc ? "row" : "column", p.index_value, inner);
    }
    case CountsProblem::kRepeatedIndex:
      return fail_at(ctx, status, fn, Where::cell("indices", p.row, p.col),
                     "the cell appears more than once");
    case CountsProblem::kBadPointer: {
      Where w = Where::bracket("ptr", p.entry);
      w.with_integer(p.index_value);
      // ptr runs from 0 to nnz, or with DIRMN_COUNTS_ONE_BASED from 1 to nnz + 1.
      const char* end = p.index_base == 0 ? "nnz" : "nnz + 1";
      if (p.pointer == kPointerStart)
        return fail_at(ctx, status, fn, w, "is %" PRId64 ", expected %" PRId64, p.index_value,
                       p.index_base);
      if (p.pointer == kPointerEnd)
        return fail_at(ctx, status, fn, w, "is %" PRId64 ", expected %s = %" PRId64, p.index_value,
                       end, p.nnz + p.index_base);
      return fail_at(ctx, status, fn, w,
                     "= %" PRId64 " is below ptr[%" PRId64 "] = %" PRId64 " or above %s = %" PRId64,
                     p.index_value, p.entry - 1, p.index_prev, end, p.nnz + p.index_base);
    }
    case CountsProblem::kNone: break;
  }
  return fail(ctx, DIRMN_ERROR_INTERNAL, fn, "an unnamed problem with the counts");
}

}  // namespace capi
}  // namespace dirmn
