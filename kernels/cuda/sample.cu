// sample.cu: dirmn_sample's tables drawn on the device and kept there
// (CudaBackend::sample), and their rows copied back to the host when a call
// needs a host copy (CudaBackend::download_rows). The kernels:
// device/sample_kernels.cuh.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "cuda_backend.cuh"
#include "device/sample_kernels.cuh"
#include "ingest_common.cuh"

namespace dirmn {
namespace cuda {
namespace {

// Rows in flight per multiprocessor at most, and the scratch they may take
// (bytes, at most this and a quarter of the free memory): scratch is 16
// bytes per category and row in flight, 20 with urn rows.
constexpr int64_t kSampleSlotsPerSm = 1024;
constexpr size_t kSampleScratchMax = size_t{1} << 31;
// The single pass's staged entries (4 or 8 bytes per row and category it
// may fill, min(size, cols)) may take at most this and a third of the free
// memory; beyond, each row is drawn twice instead.
constexpr size_t kSampleStageMax = size_t{6} << 30;
// Rows per launch, in slots: the interrupt is polled between launches.
constexpr int64_t kSampleRowsPerSlot = 8;
// A dense table's rows come back to the host in batches of about this.
constexpr size_t kDownloadBytes = size_t{64} << 20;

// Whether the gamma rows' draws may be made ahead, every cell at once
// (draw_gammas), where every row has a slot: the environment's
// DIRMN_SAMPLE_PREDRAW=0 says no, which is how the tests take the row
// kernels' own draws on small tables.
bool predraw_allowed() {
  const char* env = std::getenv("DIRMN_SAMPLE_PREDRAW");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

// kSampleStageMax, or the environment's DIRMN_SAMPLE_STAGE_BYTES where set
// (0: never stage), which is how the tests take the two-pass path on small
// tables.
size_t stage_max() {
  const char* env = std::getenv("DIRMN_SAMPLE_STAGE_BYTES");
  if (env == nullptr || *env == '\0') return kSampleStageMax;
  return static_cast<size_t>(std::strtoull(env, nullptr, 10));
}

BackendResult to_device(void* dst, const void* src, size_t bytes, const LaunchEnv& env, const char* what) {
  if (bytes == 0) return {};
  DIRMN_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, env.stream), what);
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  return {};
}

// Launches `launch(args)` over the rows in batches, polling the interrupt
// between them.
template <class Launch>
BackendResult over_rows(sample::RowsArgs a, int64_t rows, const Interrupt& interrupt,
                        const LaunchEnv& env, const char* what, Launch&& launch) {
  const int64_t batch = a.slots * kSampleRowsPerSlot;
  const int grid = static_cast<int>(ceil_div<int64_t>(a.slots, kSampleBlock));
  for (int64_t r = 0; r < rows; r += batch) {
    if (interrupt.poll()) return {DIRMN_ERROR_CANCELLED, "", 0};
    a.row_begin = r;
    a.row_end = std::min(rows, r + batch);
    launch(a, grid);
    DIRMN_CUDA_TRY(cudaGetLastError(), what);
    DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  }
  return {};
}

}  // namespace

BackendResult CudaBackend::sample(const SampleRequest& req, std::unique_ptr<BackendCounts>* out,
                                  TableInfo* info, const Interrupt& interrupt) {
  using namespace ingest;
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  const LaunchEnv e = env();
  const int64_t rows = req.rows, cols = req.cols;
  const int64_t n_vec = req.rowwise ? rows : req.k;
  bool any_gamma = false, any_urn = false;
  std::vector<int64_t> sizes;
  try {
    sizes.resize(req.sizes_stride == 0 ? 1 : static_cast<size_t>(rows));
  } catch (const std::bad_alloc&) {
    return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the sizes", 0};
  }
  for (size_t b = 0; b < sizes.size(); ++b) {
    sizes[b] = req.sizes[static_cast<int64_t>(b) * req.sizes_stride];
    (math::sample_by_urn(sizes[b], cols) ? any_urn : any_gamma) = true;
  }

  std::unique_ptr<CudaCounts> c(new (std::nothrow) CudaCounts(this, device_));
  if (!c) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for a counts object", 0};
  DeviceTable& t = c->table;
  DeviceBuffer alpha(device_), shape(device_), cum(device_), size_buf(device_), comp(device_),
      w(device_), suffix(device_), tally(device_), row_nnz(device_), top(device_), temp(device_),
      by_value(device_), blocks(device_);
  const size_t cells = static_cast<size_t>(n_vec) * static_cast<size_t>(cols);
  DIRMN_TRY(alpha.reserve(cells * sizeof(double), "cudaMalloc (alpha)"));
  DIRMN_TRY(to_device(alpha.get(), req.alpha, cells * sizeof(double), e, "cudaMemcpyAsync (alpha)"));
  DIRMN_TRY(size_buf.reserve(sizes.size() * sizeof(int64_t), "cudaMalloc (sizes)"));
  DIRMN_TRY(to_device(size_buf.get(), sizes.data(), sizes.size() * sizeof(int64_t), e, "cudaMemcpyAsync (sizes)"));
  if (req.component != nullptr) {
    DIRMN_TRY(comp.reserve(static_cast<size_t>(rows) * sizeof(int64_t), "cudaMalloc (components)"));
    DIRMN_TRY(to_device(comp.get(), req.component, static_cast<size_t>(rows) * sizeof(int64_t), e,
                        "cudaMemcpyAsync (components)"));
  }
  if (!req.rowwise && any_gamma) {
    DIRMN_TRY(shape.reserve(cells * sizeof(math::GammaShape), "cudaMalloc (gamma shapes)"));
    sample::make_shapes<<<stride_grid(static_cast<int64_t>(cells), sm_count_), kBlockThreads, 0, e.stream>>>(
        alpha.get<double>(), static_cast<int64_t>(cells), shape.get<math::GammaShape>());
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (make_shapes)");
  }
  if (any_gamma) {
    DIRMN_TRY(by_value.reserve(static_cast<size_t>(n_vec), "cudaMalloc (by-value flags)"));
    sample::vector_by_value<<<static_cast<int>(ceil_div<int64_t>(n_vec, kSampleBlock)), kSampleBlock, 0, e.stream>>>(
        alpha.get<double>(), n_vec, cols, by_value.get<uint8_t>());
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (vector_by_value)");
  }
  if (!req.rowwise && any_urn) {
    DIRMN_TRY(cum.reserve(cells * sizeof(double), "cudaMalloc (cumulative alpha)"));
    sample::make_cum<<<static_cast<int>(ceil_div<int64_t>(n_vec, kSampleBlock)), kSampleBlock, 0, e.stream>>>(
        alpha.get<double>(), n_vec, cols, cum.get<double>());
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (make_cum)");
  }

  // The single pass where the rows' bounded entries fit beside the scratch.
  size_t free_bytes = 0, total_bytes = 0;
  DIRMN_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  int64_t max_size = 0;
  for (int64_t n : sizes) max_size = std::max(max_size, n);
  const bool pack32 = cols <= 65536 && max_size < 65536;
  const size_t entry = pack32 ? sizeof(uint32_t) : sizeof(uint64_t);
  const double stage_limit = static_cast<double>(std::min(stage_max(), free_bytes / 3));
  std::vector<int64_t> stage_off;
  // An upper bound first; the rows' own bounds may fit where it does not.
  bool staged = static_cast<double>(rows) * static_cast<double>(std::min(max_size, cols)) *
                    static_cast<double>(entry) <= stage_limit;
  if (!staged && req.sizes_stride != 0) {
    double total = 0.0;
    for (int64_t n : sizes) total += static_cast<double>(std::min(n, cols));
    staged = total * static_cast<double>(entry) <= stage_limit;
  }
  DeviceBuffer stage(device_), stage_dev(device_);
  if (staged) {
    try {
      stage_off.resize(static_cast<size_t>(rows) + 1);
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the staging offsets", 0};
    }
    stage_off[0] = 0;
    for (int64_t b = 0; b < rows; ++b)
      stage_off[static_cast<size_t>(b) + 1] =
          stage_off[static_cast<size_t>(b)] + std::min(sizes[req.sizes_stride == 0 ? 0 : static_cast<size_t>(b)], cols);
    DIRMN_TRY(stage_dev.reserve(stage_off.size() * sizeof(int64_t), "cudaMalloc (staging offsets)"));
    DIRMN_TRY(to_device(stage_dev.get(), stage_off.data(), stage_off.size() * sizeof(int64_t), e,
                        "cudaMemcpyAsync (staging offsets)"));
    DIRMN_TRY(stage.reserve(static_cast<size_t>(stage_off.back()) * entry, "cudaMalloc (staged entries)"));
    DIRMN_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  }

  // Rows in flight: as many as the scratch allows, up to kSampleSlotsPerSm
  // per multiprocessor.
  const int64_t n_blocks = math::chain_blocks(cols);
  const size_t per_slot = static_cast<size_t>(cols) * (any_urn ? 20 : 16) + static_cast<size_t>(n_blocks) * 8;
  const size_t budget = std::min(kSampleScratchMax, free_bytes / 4);
  int64_t slots = std::min<int64_t>(rows, int64_t{sm_count_} * kSampleSlotsPerSm);
  slots = std::max<int64_t>(1, std::min<int64_t>(slots, static_cast<int64_t>(budget / per_slot)));
  DIRMN_TRY(w.reserve(static_cast<size_t>(slots) * cols * sizeof(double), "cudaMalloc (sampler scratch)"));
  DIRMN_TRY(suffix.reserve(static_cast<size_t>(slots) * cols * sizeof(double), "cudaMalloc (sampler scratch)"));
  if (any_gamma)
    DIRMN_TRY(blocks.reserve(static_cast<size_t>(slots) * n_blocks * sizeof(double), "cudaMalloc (sampler scratch)"));
  if (any_urn) {
    const size_t bytes = static_cast<size_t>(slots) * cols * sizeof(uint32_t);
    DIRMN_TRY(tally.reserve(bytes, "cudaMalloc (sampler scratch)"));
    DIRMN_CUDA_TRY(cudaMemsetAsync(tally.get(), 0, bytes, e.stream), "cudaMemsetAsync (urn tallies)");
  }

  sample::RowsArgs a;
  a.cols = cols;
  a.alpha = alpha.get<double>();
  a.rowwise = req.rowwise;
  a.shape = shape.get<math::GammaShape>();
  a.cum = cum.get<double>();
  a.sizes = size_buf.get<int64_t>();
  a.sizes_stride = req.sizes_stride == 0 ? 0 : 1;
  a.component = req.component != nullptr ? comp.get<int64_t>() : nullptr;
  a.seed = req.seed;
  a.first_row = req.first_row;
  a.slots = slots;
  a.w = w.get<double>();
  a.suffix = suffix.get<double>();
  a.tally = tally.get<uint32_t>();
  a.by_value = by_value.get<uint8_t>();
  a.t = blocks.get<double>();
  // Few rows (each its own slot): their counts drawn ahead, every gamma
  // variate a thread, then each row's split among its blocks of
  // categories, then every block a thread; the row kernels only list them
  // (and stay as they are for the urn rows).
  const bool predraw = any_gamma && rows <= slots && predraw_allowed();
  if (predraw) {
    sample::RowsArgs all = a;
    all.row_begin = 0;
    all.row_end = rows;
    sample::draw_gammas<<<stride_grid(rows * cols, sm_count_), kBlockThreads, 0, e.stream>>>(all);
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (draw_gammas)");
    sample::split_rows<<<static_cast<int>(ceil_div<int64_t>(rows, kSampleBlock)), kSampleBlock, 0, e.stream>>>(all);
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (split_rows)");
    sample::draw_blocks<<<stride_grid(rows * n_blocks, sm_count_), kSampleBlock, 0, e.stream>>>(all);
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (draw_blocks)");
  }
  a.counts_drawn = predraw;

  // Pass 1: the rows drawn (staged) or counted, with what the table's form
  // depends on.
  t.rows = rows;
  t.cols = cols;
  DIRMN_TRY(row_nnz.reserve(static_cast<size_t>(rows) * sizeof(int64_t), "cudaMalloc (row nonzeros)"));
  DIRMN_TRY(t.row_total.reserve(static_cast<size_t>(rows) * sizeof(double), "cudaMalloc (row totals)"));
  DIRMN_TRY(t.row_lcoef.reserve(static_cast<size_t>(rows) * sizeof(double), "cudaMalloc (row coefficients)"));
  DIRMN_TRY(top.reserve(sizeof(unsigned long long), "cudaMalloc (largest count)"));
  DIRMN_CUDA_TRY(cudaMemsetAsync(top.get(), 0, sizeof(unsigned long long), e.stream), "cudaMemsetAsync");
  int64_t* nnz_of = row_nnz.get<int64_t>();
  double* total_of = t.row_total.get<double>();
  double* lcoef_of = t.row_lcoef.get<double>();
  unsigned long long* top_of = top.get<unsigned long long>();
  const int64_t* off = stage_dev.get<int64_t>();
  // The staged entries' type: E{} of the packing chosen above.
  const auto with_entry = [&](auto&& f) { return pack32 ? f(uint32_t{}) : f(uint64_t{}); };
  if (!staged) {
    DIRMN_TRY(over_rows(a, rows, interrupt, e, "kernel launch (count_rows)", [&](const sample::RowsArgs& x, int grid) {
      sample::count_rows<<<grid, kSampleBlock, 0, e.stream>>>(x, nnz_of, total_of, lcoef_of, top_of);
    }));
  } else {
    DIRMN_TRY(with_entry([&](auto etag) {
      using E = decltype(etag);
      return over_rows(a, rows, interrupt, e, "kernel launch (stage_rows)", [&](const sample::RowsArgs& x, int grid) {
        sample::stage_rows<E><<<grid, kSampleBlock, 0, e.stream>>>(x, off, stage.get<E>(), nnz_of, total_of,
                                                                   lcoef_of, top_of);
      });
    }));
    // The rows are drawn: their scratch goes before the table's form is
    // allocated (the two-pass path keeps it for its second pass; every urn
    // row left its tallies zero).
    w.release();
    suffix.release();
    tally.release();
    blocks.release();
  }
  DIRMN_TRY(t.row_ptr.reserve(static_cast<size_t>(rows + 1) * sizeof(int64_t), "cudaMalloc (row pointers)"));
  int64_t* rp = t.row_ptr.get<int64_t>();
  DIRMN_TRY(scan_row_ptr(nnz_of, rows, rp, temp, e));
  int64_t nnz = 0;
  unsigned long long max_count = 0;
  DIRMN_TRY(to_host(&nnz, rp + rows, sizeof nnz, e));
  DIRMN_TRY(to_host(&max_count, top_of, sizeof max_count, e));
  temp.release();

  // The host's choice of form for this table.
  t.nnz = nnz;
  t.max_count = static_cast<double>(max_count);
  t.integral = true;
  t.real_valued = false;
  const ValueType vt = choose_vtype(t.max_count, true, false);
  t.sparse = choose_sparse(req.storage, rows, cols, nnz, vt);
  t.vtype = vt;
  t.cell = cell_of(vt);
  const int vb = static_cast<int>(value_bytes(vt));
  void* co = nullptr;
  void* vo = nullptr;
  int64_t pitch = 0;
  if (t.sparse) {
    t.col16 = cols <= 65536;
    DIRMN_TRY(reserve_csr(&t, nnz, vb, e));
    co = t.col_idx.get();
    vo = t.values_buf.get();
  } else {
    pitch = compact_pitch(cols, vb);
    const size_t bytes = static_cast<size_t>(rows) * static_cast<size_t>(pitch) * vb;
    DIRMN_TRY(t.values_buf.reserve(bytes, "cudaMalloc (counts values)"));
    DIRMN_CUDA_TRY(cudaMemsetAsync(t.values_buf.get(), 0, bytes, e.stream), "cudaMemsetAsync (counts values)");
    t.pitch = pitch;
    t.vec = kVectorBytes / vb;
    vo = t.values_buf.get();
  }

  // Pass 2: the staged entries moved, or the same draws again, written.
  const auto write = [&](auto dtag, auto itag) -> BackendResult {
    using D = decltype(dtag);
    using I = decltype(itag);
    if (staged) {
      const int grid = stride_grid(rows * 32, sm_count_);
      with_entry([&](auto etag) {
        using E = decltype(etag);
        if (t.sparse)
          sample::unstage_rows<E, D, I, false><<<grid, kBlockThreads, 0, e.stream>>>(
              rows, off, stage.get<E>(), nnz_of, rp, static_cast<I*>(co), static_cast<D*>(vo), 0);
        else
          sample::unstage_rows<E, D, I, true><<<grid, kBlockThreads, 0, e.stream>>>(
              rows, off, stage.get<E>(), nnz_of, rp, nullptr, static_cast<D*>(vo), pitch);
        return 0;
      });
      DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (unstage_rows)");
      DIRMN_CUDA_TRY(cudaStreamSynchronize(e.stream), "cudaStreamSynchronize");
      return {};
    }
    if (t.sparse)
      return over_rows(a, rows, interrupt, e, "kernel launch (write_csr)", [&](const sample::RowsArgs& x, int grid) {
        sample::write_csr<D, I><<<grid, kSampleBlock, 0, e.stream>>>(x, rp, static_cast<I*>(co), static_cast<D*>(vo));
      });
    return over_rows(a, rows, interrupt, e, "kernel launch (write_dense)", [&](const sample::RowsArgs& x, int grid) {
      sample::write_dense<D><<<grid, kSampleBlock, 0, e.stream>>>(x, static_cast<D*>(vo), pitch);
    });
  };
  const bool col16 = !t.sparse || t.col16;
  BackendResult r;
  switch (vt) {
    case ValueType::U8: r = col16 ? write(uint8_t{}, uint16_t{}) : write(uint8_t{}, uint32_t{}); break;
    case ValueType::U16: r = col16 ? write(uint16_t{}, uint16_t{}) : write(uint16_t{}, uint32_t{}); break;
    default: r = col16 ? write(uint32_t{}, uint16_t{}) : write(uint32_t{}, uint32_t{}); break;
  }
  DIRMN_TRY(r);
  if (!t.sparse) t.row_ptr.release();
  t.values = t.values_buf.get();
  DIRMN_TRY(total_and_max(&t, e));
  DIRMN_TRY(build_panels(&t, e));
  return finish_table(std::move(c), out, info);
}

BackendResult CudaBackend::download_rows(const BackendCounts& counts, CsrRows* out) {
  DeviceGuard guard(device_);
  DIRMN_TRY(guard.result());
  const DeviceTable& t = table_of(counts);
  if (t.wrapped || t.vtype == ValueType::F64)
    return {DIRMN_ERROR_NOT_SUPPORTED, "host copies of counts wrapped from device memory", 0};
  const LaunchEnv e = env();
  const size_t vb = value_bytes(t.vtype);
  const auto value_at = [&](const std::vector<unsigned char>& v, size_t i) -> int32_t {
    switch (t.vtype) {
      case ValueType::U8: return v[i];
      case ValueType::U16: { uint16_t x; std::memcpy(&x, &v[i * 2], 2); return x; }
      default: { uint32_t x; std::memcpy(&x, &v[i * 4], 4); return static_cast<int32_t>(x); }
    }
  };
  try {
    out->ptr.assign(static_cast<size_t>(t.rows) + 1, 0);
    out->col.resize(static_cast<size_t>(t.nnz));
    out->count.resize(static_cast<size_t>(t.nnz));
    if (t.sparse) {
      const size_t nnz = static_cast<size_t>(t.nnz);
      std::vector<unsigned char> values(nnz * vb), cols(nnz * (t.col16 ? 2 : 4));
      DIRMN_TRY(ingest::to_host(out->ptr.data(), t.row_ptr.get(), out->ptr.size() * sizeof(int64_t), e));
      DIRMN_TRY(ingest::to_host(cols.data(), t.col_idx.get(), cols.size(), e));
      DIRMN_TRY(ingest::to_host(values.data(), t.values, values.size(), e));
      for (size_t i = 0; i < nnz; ++i) {
        if (t.col16) {
          uint16_t c;
          std::memcpy(&c, &cols[i * 2], 2);
          out->col[i] = c;
        } else {
          uint32_t c;
          std::memcpy(&c, &cols[i * 4], 4);
          out->col[i] = c;
        }
        out->count[i] = value_at(values, i);
      }
    } else {
      // Batches of rows of about kDownloadBytes each.
      const size_t row_bytes = static_cast<size_t>(t.pitch) * vb;
      const int64_t batch = std::max<int64_t>(1, static_cast<int64_t>(kDownloadBytes / row_bytes));
      std::vector<unsigned char> rows(static_cast<size_t>(std::min(batch, t.rows)) * row_bytes), row(row_bytes);
      size_t at = 0;
      for (int64_t b0 = 0; b0 < t.rows; b0 += batch) {
        const int64_t nb = std::min(batch, t.rows - b0);
        DIRMN_TRY(ingest::to_host(rows.data(), static_cast<const unsigned char*>(t.values) + b0 * row_bytes,
                                  static_cast<size_t>(nb) * row_bytes, e));
        for (int64_t b = b0; b < b0 + nb; ++b) {
          std::memcpy(row.data(), rows.data() + static_cast<size_t>(b - b0) * row_bytes, row_bytes);
          for (int64_t v = 0; v < t.cols; ++v) {
            const int32_t x = value_at(row, static_cast<size_t>(v));
            if (x == 0) continue;
            out->col[at] = v;
            out->count[at] = x;
            ++at;
          }
          out->ptr[static_cast<size_t>(b) + 1] = static_cast<int64_t>(at);
        }
      }
    }
  } catch (const std::bad_alloc&) {
    return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for a table's rows", 0};
  }
  return {};
}

}  // namespace cuda
}  // namespace dirmn
