// extract.cpp: scatter_columns over either stored form and value type.
#include "extract.hpp"

namespace dirmn {

void scatter_columns(const HostTable& t, const int64_t* slot, int64_t out_cols, double* out) {
  with_value_type(t.vtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = reinterpret_cast<const T*>(t.values.data());
    for (int64_t b = 0; b < t.rows; ++b) {
      double* row = out + b * out_cols;
      if (t.sparse) {
        for (int64_t i = t.row_ptr[static_cast<size_t>(b)]; i < t.row_ptr[static_cast<size_t>(b) + 1]; ++i) {
          const int64_t s = slot[t.col_idx[static_cast<size_t>(i)]];
          if (s >= 0) row[s] = static_cast<double>(x[i]);
        }
      } else {
        const T* r = x + b * t.cols;
        for (int64_t v = 0; v < t.cols; ++v)
          if (slot[v] >= 0 && r[v] != 0) row[slot[v]] = static_cast<double>(r[v]);
      }
    }
    return 0;
  });
}

}  // namespace dirmn
