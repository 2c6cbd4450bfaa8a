// errors.hpp: the error slot of a context (or of a thread, before a context
// exists), the wording of every failure, and its location as data.
//
// A message reads "<function>: <position> (0-based): <detail>" where the
// failure has a position, else "<function>: <detail>"; the position is
// worded here alone, from the same numbers dirmn_last_error_location gives
// the bindings, so that they can word it in their own convention.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../../kernels/backend.hpp"
#include "../../kernels/table/input.hpp"
#include "dirmn.h"

namespace dirmn {
namespace capi {

// Where a failure was, in a caller's argument (0-based), and how its
// position is worded.
struct Where {
  enum Form : uint8_t {
    kNone,        // no position
    kCell,        // "row r, column c"
    kParam,       // "vector j, index i"
    kRowParam,    // "row r, index i"
    kVector,      // "vector j"
    kRow,         // "row r"
    kNamedIndex,  // "<argument> index i"
    kBracket,     // "<argument>[i]", followed by the detail without a colon
    kEntry,       // "entry i (row r)", or "(column c)" for a CSC table
  };
  Form form = kNone;
  const char* argument = "";  // static
  int64_t row = -1, column = -1, vector = -1, index = -1;
  bool has_value = false;
  double value = 0.0;
  bool has_integer = false;  // value came from an integer, exactly this
  int64_t integer = 0;

  static Where cell(const char* arg, int64_t r, int64_t c) { return make(kCell, arg, r, c, -1, -1); }
  static Where param(int64_t j, int64_t i) { return make(kParam, "params", -1, -1, j, i); }
  static Where row_param(int64_t r, int64_t i) { return make(kRowParam, "params", r, -1, -1, i); }
  static Where vector_of(int64_t j) { return make(kVector, "params", -1, -1, j, -1); }
  static Where row_of(const char* arg, int64_t r) { return make(kRow, arg, r, -1, -1, -1); }
  static Where named_index(const char* arg, int64_t i) { return make(kNamedIndex, arg, -1, -1, -1, i); }
  static Where bracket(const char* arg, int64_t i) { return make(kBracket, arg, -1, -1, -1, i); }
  static Where entry(const char* arg, int64_t i, int64_t r, int64_t c) { return make(kEntry, arg, r, c, -1, i); }
  Where& with_value(double v) {
    has_value = true;
    value = v;
    return *this;
  }
  Where& with_integer(int64_t v) {
    with_value(static_cast<double>(v));
    has_integer = true;
    integer = v;
    return *this;
  }

 private:
  static Where make(Form f, const char* arg, int64_t r, int64_t c, int64_t j, int64_t i) {
    Where w;
    w.form = f;
    w.argument = arg;
    w.row = r;
    w.column = c;
    w.vector = j;
    w.index = i;
    return w;
  }
};

// A message and its location. Trivially destructible (a fixed buffer), so
// that a thread's slot costs no allocation -- not even on first use.
struct ErrorSlot {
  static constexpr size_t kMessageBytes = 1024;
  char message[kMessageBytes] = {};
  size_t detail_at = 0;  // where the detail starts in message
  Where where;
  void clear() {
    message[0] = '\0';
    detail_at = 0;
    where = Where();
  }
};

// The slot of ctx, or of the calling thread when ctx is null.
ErrorSlot& slot_of(const dirmn_context* ctx);

// Records a failure of `fn` without a position and returns `status`.
dirmn_status fail(dirmn_context* ctx, dirmn_status status, const char* fn, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

// Records a failure of `fn` at `where` and returns `status`.
dirmn_status fail_at(dirmn_context* ctx, dirmn_status status, const char* fn, const Where& where,
                     const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

// Puts "<fn>: <text>: " before the message of the failure recorded last in
// ctx (which keeps its location and detail), and returns `status`.
dirmn_status prefix_failure(dirmn_context* ctx, dirmn_status status, const char* fn,
                            const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

// Words a backend's failure ("what" and a code) for `fn`.
dirmn_status fail_backend(dirmn_context* ctx, const char* fn, const BackendResult& r);

// Words what table building or device ingestion found wrong with a
// caller's table (`status` is theirs).
dirmn_status fail_counts(dirmn_context* ctx, const char* fn, dirmn_status status,
                         const CountsProblem& p, int64_t rows, int64_t cols);

// A value as messages write it: %.17g, with Inf, -Inf and NaN for the
// non-finite ones. `buf` needs kValueChars.
constexpr size_t kValueChars = 32;
const char* value_text(double x, char* buf);

// Clears the error slot of ctx (of the thread when null).
void clear_error(const dirmn_context* ctx);

}  // namespace capi
}  // namespace dirmn
