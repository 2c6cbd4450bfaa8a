// build_sparse.cpp: validation of a caller's compressed sparse host table
// (CSR or CSC) and its encoding into the compact form, on one thread, for
// every input: unsorted indices are sorted here, and the first problem is
// found in one fixed order (the entries in input order; repeats, in
// row-major order, once every entry has passed). build_sparse_fast.cpp
// takes the common case and hands the rest to this builder.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "build.hpp"
#include "storage.hpp"
#include "validate.hpp"

namespace dirmn {
namespace {

template <class I>
int64_t index_at(const void* p, int64_t k) {
  return static_cast<int64_t>(static_cast<const I*>(p)[k]);
}

int64_t read_index(dirmn_index_type t, const void* p, int64_t k) {
  return t == DIRMN_INDEX_INT32 ? index_at<int32_t>(p, k) : index_at<int64_t>(p, k);
}

template <class S>
double value_at(const void* p, int64_t k) {
  return static_cast<double>(static_cast<const S*>(p)[k]);
}

}  // namespace

dirmn_status build_sparse_table_serial(const SparseInput& input, HostThreads& threads,
                                const Interrupt& interrupt, HostTable* out, CountsProblem* problem) {
  if (interrupt.poll()) return DIRMN_ERROR_CANCELLED;
  build::WorkPoller poller(interrupt);
  const int64_t rows = input.rows, cols = input.cols, nnz = input.nnz;
  const dirmn_index_type index_type = input.index_type;
  const dirmn_dtype value_dtype = input.value_dtype;
  const void* ptr = input.ptr;
  const void* indices = input.indices;
  const void* values = input.values;
  const dirmn_storage storage = input.storage;
  const bool csr = input.format == DIRMN_CSR;
  const int64_t outer = csr ? rows : cols, inner = csr ? cols : rows;
  const bool real = input.real_valued;
  problem->csc = !csr;
  // ptr and indices count from base: entry positions and inner indices
  // below are 0-based, the values a problem reports the caller's.
  const int64_t base = input.index_base;
  problem->index_base = base;
  const auto ptr_at = [&](int64_t o) { return build::from_base(read_index(index_type, ptr, o), base); };
  const auto index_at_entry = [&](int64_t k) {
    return build::from_base(read_index(index_type, indices, k), base);
  };

  // The compressed pointer array must run from 0 to nnz without going back.
  const auto bad_pointer = [&](int64_t entry, PointerIssue issue) {
    problem->kind = CountsProblem::kBadPointer;
    problem->entry = entry;
    problem->index_value = read_index(index_type, ptr, entry);
    problem->index_prev = entry > 0 ? read_index(index_type, ptr, entry - 1) : 0;
    problem->nnz = nnz;
    problem->pointer = issue;
    return DIRMN_ERROR_INVALID_ARGUMENT;
  };
  if (ptr_at(0) != 0) return bad_pointer(0, kPointerStart);
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t a = ptr_at(o), b = ptr_at(o + 1);
    if (b < a || b > nnz) return bad_pointer(o + 1, kPointerOrder);
  }
  if (ptr_at(outer) != nnz) return bad_pointer(outer, kPointerEnd);

  auto value = [&](int64_t k) {
    switch (value_dtype) {
      case DIRMN_INT32: return value_at<int32_t>(values, k);
      case DIRMN_INT64: return value_at<int64_t>(values, k);
      case DIRMN_FLOAT32: return value_at<float>(values, k);
      default: return value_at<double>(values, k);
    }
  };
  // Validate every entry, then sort into CSR by counting sort on rows:
  // visiting the outer dimension in order gives sorted inner indices
  // within each output row for CSC input; CSR input is first transposed
  // the same way so its column indices come out sorted too.
  std::vector<int64_t> cnt(static_cast<size_t>(inner) + 1, 0);
  // Running row totals, bounded as the counts are (validate.hpp).
  std::vector<double> row_sum(static_cast<size_t>(rows), 0.0);
  const double limit = build::row_total_limit(real);
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t a = ptr_at(o), b = ptr_at(o + 1);
    if (poller.stop(b - a + 1)) return DIRMN_ERROR_CANCELLED;
    for (int64_t k = a; k < b; ++k) {
      const int64_t in = index_at_entry(k);
      if (in < 0 || in >= inner) {
        problem->kind = CountsProblem::kBadIndex;
        problem->entry = k;
        problem->outer = o;
        problem->index_value = in + base;
        return DIRMN_ERROR_INVALID_ARGUMENT;
      }
      const double x = value(k);
      const bool ok =
          value_dtype == DIRMN_INT32
              ? build::check_count<int32_t>(static_cast<int32_t>(x), real, problem)
          : value_dtype == DIRMN_INT64
              ? build::check_count<int64_t>(static_cast<const int64_t*>(values)[k], real, problem)
          : value_dtype == DIRMN_FLOAT32
              ? build::check_count<float>(static_cast<const float*>(values)[k], real, problem)
              : build::check_count<double>(x, real, problem);
      const int64_t row = csr ? o : in;
      if (!ok || !build::add_to_row(&row_sum[static_cast<size_t>(row)], x, limit, real, problem)) {
        const int64_t col = csr ? in : o;
        if (value_dtype == DIRMN_INT64)
          build::bad_count(problem, row, col, static_cast<const int64_t*>(values)[k]);
        else if (value_dtype == DIRMN_INT32)
          build::bad_count(problem, row, col, static_cast<const int32_t*>(values)[k]);
        else
          build::bad_count(problem, row, col, x);
        return DIRMN_ERROR_INVALID_COUNTS;
      }
      ++cnt[static_cast<size_t>(in) + 1];
    }
  }
  // Transpose into the inner-major order (a CSR of the transposed table),
  // inner indices now run over the outer dimension in ascending order.
  for (int64_t i = 0; i < inner; ++i) cnt[static_cast<size_t>(i) + 1] += cnt[static_cast<size_t>(i)];
  std::vector<int64_t> t_idx(static_cast<size_t>(nnz));
  std::vector<double> t_val(static_cast<size_t>(nnz));
  {
    std::vector<int64_t> cur(cnt.begin(), cnt.end() - 1);
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t a = ptr_at(o), b = ptr_at(o + 1);
      if (poller.stop(b - a + 1)) return DIRMN_ERROR_CANCELLED;
      for (int64_t k = a; k < b; ++k) {
        const int64_t in = index_at_entry(k);
        const int64_t p = cur[static_cast<size_t>(in)]++;
        t_idx[static_cast<size_t>(p)] = o;
        t_val[static_cast<size_t>(p)] = value(k);
      }
    }
  }
  // Now (inner -> outer). For CSC input, inner = rows: that is CSR already,
  // with columns ascending. For CSR input, inner = cols: transpose once more.
  std::vector<int64_t> r_ptr, r_col;
  std::vector<double> r_val;
  if (!csr) {
    r_ptr = std::move(cnt);
    r_col = std::move(t_idx);
    r_val = std::move(t_val);
  } else {
    r_ptr.assign(static_cast<size_t>(rows) + 1, 0);
    for (int64_t p = 0; p < nnz; ++p) ++r_ptr[static_cast<size_t>(t_idx[static_cast<size_t>(p)]) + 1];
    for (int64_t i = 0; i < rows; ++i) r_ptr[static_cast<size_t>(i) + 1] += r_ptr[static_cast<size_t>(i)];
    r_col.resize(static_cast<size_t>(nnz));
    r_val.resize(static_cast<size_t>(nnz));
    std::vector<int64_t> cur(r_ptr.begin(), r_ptr.end() - 1);
    for (int64_t j = 0; j < cols; ++j) {
      if (poller.stop(cnt[static_cast<size_t>(j) + 1] - cnt[static_cast<size_t>(j)] + 1))
        return DIRMN_ERROR_CANCELLED;
      for (int64_t p = cnt[static_cast<size_t>(j)]; p < cnt[static_cast<size_t>(j) + 1]; ++p) {
        const int64_t i = t_idx[static_cast<size_t>(p)];
        const int64_t q = cur[static_cast<size_t>(i)]++;
        r_col[static_cast<size_t>(q)] = j;
        r_val[static_cast<size_t>(q)] = t_val[static_cast<size_t>(p)];
      }
    }
  }
  // Sorted rows make repeats adjacent.
  build::ScanStats s;
  std::vector<int64_t> row_nnz(static_cast<size_t>(rows), 0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t p = r_ptr[static_cast<size_t>(i)]; p < r_ptr[static_cast<size_t>(i) + 1]; ++p) {
      if (p > r_ptr[static_cast<size_t>(i)] &&
          r_col[static_cast<size_t>(p)] == r_col[static_cast<size_t>(p) - 1]) {
        problem->kind = CountsProblem::kRepeatedIndex;
        problem->row = i;
        problem->col = r_col[static_cast<size_t>(p)];
        return DIRMN_ERROR_INVALID_ARGUMENT;
      }
      const double x = r_val[static_cast<size_t>(p)];
      if (x != 0.0) {
        s.add(x);
        ++row_nnz[static_cast<size_t>(i)];
      }
    }
  const ValueType vt = choose_vtype(s.max_count, s.integral, real);
  const bool sparse = choose_sparse(storage, rows, cols, s.nnz, vt);
  build::layout_table(s, row_nnz, rows, cols, real, sparse, vt, out);
  // Encode: explicit zeros were not counted and are dropped here.
  auto put = [&](int64_t slot, double x) {
    switch (vt) {
      case ValueType::U8: reinterpret_cast<uint8_t*>(out->values.data())[slot] = static_cast<uint8_t>(x); break;
      case ValueType::U16: reinterpret_cast<uint16_t*>(out->values.data())[slot] = static_cast<uint16_t>(x); break;
      case ValueType::U32: reinterpret_cast<uint32_t*>(out->values.data())[slot] = static_cast<uint32_t>(x); break;
      case ValueType::F64: reinterpret_cast<double*>(out->values.data())[slot] = x; break;
    }
  };
  int64_t q = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t p = r_ptr[static_cast<size_t>(i)]; p < r_ptr[static_cast<size_t>(i) + 1]; ++p) {
      const double x = r_val[static_cast<size_t>(p)];
      if (x == 0.0) continue;
      const int64_t j = r_col[static_cast<size_t>(p)];
      if (sparse) {
        out->col_idx[static_cast<size_t>(q)] = static_cast<uint32_t>(j);
        put(q++, x);
      } else {
        put(i * cols + j, x);
      }
    }

  if (!compute_row_stats(out, threads, 1, interrupt)) return DIRMN_ERROR_CANCELLED;
  return DIRMN_SUCCESS;
}

}  // namespace dirmn
