// shapes_tables.hpp: the tables of bench_shapes.cpp -- seeded generators of
// microbiome-, single-cell- and text-shaped count tables, made directly in
// CSR form (the larger ones never exist densely), the real CSV tables, and
// the raw dump that bench/shapes_torch.py reads.
//
// Every synthetic table is drawn the same way, as reads (tokens) falling
// into columns: each column has a base weight that falls off as a power of
// its rank (a few dominant columns, a long tail of rare ones); each row
// belongs to one of T "types" whose weights are the base ones times a
// log-normal factor per column (communities, cell types, topics); and a
// fraction of every row's reads comes from a row-private profile over the
// top columns with fresh log-normal factors (the per-row, Dirichlet-like
// perturbation that makes the table overdispersed within a type). A row's
// depth is log-normal. Counts are the reads per column, so most cells are
// zero and the nonzero ones are heavy-tailed. Draws come from splitmix64,
// so a table is the same on every platform and standard library.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "splitmix.hpp"

namespace shapes {

struct Rng : SplitMix64 {
  // Box-Muller; one of the pair is thrown away, which keeps the stream simple.
  double normal() {
    const double u = 1.0 - uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

// Walker's alias method: O(1) draws from a fixed discrete distribution,
// which keeps a row's cost proportional to its reads, not to the columns.
class Alias {
 public:
  void build(const std::vector<double>& w) {
    const size_t n = w.size();
    prob_.assign(n, 0.0);
    alias_.assign(n, 0);
    double sum = 0.0;
    for (double x : w) sum += x;
    std::vector<double> p(n);
    std::vector<uint32_t> small, large;
    for (size_t i = 0; i < n; ++i) {
      p[i] = w[i] * static_cast<double>(n) / sum;
      (p[i] < 1.0 ? small : large).push_back(static_cast<uint32_t>(i));
    }
    while (!small.empty() && !large.empty()) {
      const uint32_t s = small.back(), l = large.back();
      small.pop_back();
      prob_[s] = p[s];
      alias_[s] = l;
      p[l] -= 1.0 - p[s];
      if (p[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (uint32_t i : large) prob_[i] = 1.0;
    for (uint32_t i : small) prob_[i] = 1.0;  // rounding leftovers
  }
  uint32_t draw(Rng& r) const {
    const uint64_t u = r.next();
    const size_t i = static_cast<size_t>((u >> 32) % prob_.size());
    const double f = static_cast<double>(u & 0xffffffffu) * 0x1.0p-32;
    return f < prob_[i] ? static_cast<uint32_t>(i) : alias_[i];
  }

 private:
  std::vector<double> prob_;
  std::vector<uint32_t> alias_;
};

// A table in CSR form with int32 pointers, indices and values (the form the
// bench loads), its columns sorted within each row.
struct Csr {
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> ptr, idx, val;
  int64_t nnz() const { return static_cast<int64_t>(idx.size()); }
};

struct Spec {
  const char* name;
  int64_t rows, cols;
  double zipf;            // base weight of rank r: (r + rank_offset)^-zipf
  double rank_offset;
  std::vector<double> head_share;  // exact read shares of the first ranks (may be empty)
  int types;              // row types (communities, cell types, topics)
  double type_sigma;      // log-normal sd of a type's per-column factor
  double private_share;   // fraction of a row's reads from its private profile
  int private_top;        // the private profile covers the top ranks
  double private_sigma;   // log-normal sd of the private factors
  double depth_median, depth_sigma;  // a row's reads: log-normal
  int64_t depth_min, depth_max;
  uint64_t seed;
  const char* about;      // the shape in words, for the printed header
};

inline Csr generate(const Spec& s) {
  Rng rng{s.seed};
  const size_t V = static_cast<size_t>(s.cols);
  // Which column holds each rank: a fixed shuffle, so dominant columns are
  // spread over the table as in real data.
  std::vector<uint32_t> col_of_rank(V);
  for (size_t r = 0; r < V; ++r) col_of_rank[r] = static_cast<uint32_t>(r);
  for (size_t r = V - 1; r > 0; --r) std::swap(col_of_rank[r], col_of_rank[rng.below(r + 1)]);
  std::vector<double> base(V);
  double tail = 0.0;
  for (size_t r = s.head_share.size(); r < V; ++r)
    tail += base[r] = std::pow(static_cast<double>(r) + s.rank_offset, -s.zipf);
  double head = 0.0;
  for (double h : s.head_share) head += h;
  for (size_t r = s.head_share.size(); r < V; ++r) base[r] *= (1.0 - head) / tail;
  for (size_t r = 0; r < s.head_share.size(); ++r) base[r] = s.head_share[r];

  std::vector<Alias> type_table(static_cast<size_t>(s.types));
  std::vector<double> w(V);
  for (auto& t : type_table) {
    for (size_t r = 0; r < V; ++r) w[r] = base[r] * std::exp(s.type_sigma * rng.normal());
    t.build(w);
  }
  const size_t top = std::min(V, static_cast<size_t>(s.private_top));
  std::vector<double> pw(top);
  Alias priv;

  Csr c;
  c.rows = s.rows;
  c.cols = s.cols;
  c.ptr.assign(static_cast<size_t>(s.rows) + 1, 0);
  std::vector<int32_t> count(V, 0);
  std::vector<uint32_t> touched;
  for (int64_t b = 0; b < s.rows; ++b) {
    const Alias& type = type_table[rng.below(static_cast<uint64_t>(s.types))];
    for (size_t r = 0; r < top; ++r) pw[r] = base[r] * std::exp(s.private_sigma * rng.normal());
    priv.build(pw);
    const double d = s.depth_median * std::exp(s.depth_sigma * rng.normal());
    const int64_t depth = std::clamp(static_cast<int64_t>(std::llround(d)), s.depth_min, s.depth_max);
    touched.clear();
    for (int64_t i = 0; i < depth; ++i) {
      const uint32_t rank = rng.uniform() < s.private_share ? priv.draw(rng) : type.draw(rng);
      const uint32_t v = col_of_rank[rank];
      if (count[v]++ == 0) touched.push_back(v);
    }
    std::sort(touched.begin(), touched.end());
    for (uint32_t v : touched) {
      c.idx.push_back(static_cast<int32_t>(v));
      c.val.push_back(count[v]);
      count[v] = 0;
    }
    c.ptr[static_cast<size_t>(b) + 1] = static_cast<int32_t>(c.idx.size());
  }
  return c;
}

// The synthetic shapes. --quick takes a quarter of the rows, half of the
// columns and half of the depth, which keeps the density near the full
// table's.
inline std::vector<Spec> synthetic_specs(bool quick, bool large = false) {
  std::vector<Spec> v = {
      // 16S-like: a few dominant taxa, a long Zipf tail; community types.
      {"microbiome", 2000, 30000, 1.15, 2.0, {}, 6, 1.0, 0.3, 500, 1.0, 7000.0, 0.5, 1000, 30000, 26001,
       "taxa rank^-1.15, 6 community types, 30 % of reads from a per-sample perturbation of the top 500, "
       "depth log-normal median 7000"},
      // UMI-like: a few very high (mitochondrial-like) genes, most counts 1-3.
      {"single-cell", 20000, 20000, 0.9, 10.0, {0.15, 0.05, 0.02}, 8, 0.8, 0.2, 300, 1.0, 750.0, 1.0, 200, 200000,
       26002,
       "genes rank^-0.9 after three of 15, 5 and 2 % of the UMIs, 8 cell types, depth log-normal median 750 "
       "(sd 1 in log)"},
      // Words: Zipf frequencies, topics, short documents.
      {"text", 20000, 50000, 1.05, 2.7, {}, 10, 1.2, 0.2, 500, 1.0, 130.0, 0.5, 20, 5000, 26003,
       "words rank^-1.05, 10 topics, documents of log-normal length, median 130 words"},
  };
  // --large: issue #27's sizes for one GPU (more rows, the same shape).
  if (large) {
    v[1].rows = 300000;
    v[2].rows = 100000;
  }
  if (quick)
    for (auto& s : v) {
      s.rows /= 4;
      s.cols /= 2;
      s.depth_median /= 2;
      s.depth_min /= 2;
      s.depth_max /= 2;
    }
  return v;
}

// A CSV of a header row of column names, then per row its name and integer
// counts (rows are observations, as ../shared/data's README says).
inline bool read_csv(const std::string& path, Csr* c) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line, cell;
  if (!std::getline(in, line)) return false;
  *c = Csr{};
  c->ptr.push_back(0);
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::getline(ss, cell, ',');  // the sample's name
    int64_t v = 0;
    while (std::getline(ss, cell, ',')) {
      const long long x = std::stoll(cell);
      if (x != 0) {
        c->idx.push_back(static_cast<int32_t>(v));
        c->val.push_back(static_cast<int32_t>(x));
      }
      ++v;
    }
    if (c->rows == 0) c->cols = v;
    if (v != c->cols) return false;
    ++c->rows;
    c->ptr.push_back(static_cast<int32_t>(c->idx.size()));
  }
  return c->rows > 0;
}

inline std::vector<int32_t> to_dense(const Csr& c) {
  std::vector<int32_t> x(static_cast<size_t>(c.rows * c.cols), 0);
  for (int64_t b = 0; b < c.rows; ++b)
    for (int32_t i = c.ptr[static_cast<size_t>(b)]; i < c.ptr[static_cast<size_t>(b) + 1]; ++i)
      x[static_cast<size_t>(b * c.cols + c.idx[static_cast<size_t>(i)])] = c.val[static_cast<size_t>(i)];
  return x;
}

template <class T>
bool write_raw(const std::string& path, const T* p, size_t n) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(p), static_cast<std::streamsize>(n * sizeof(T)));
  return static_cast<bool>(f);
}

// The dump shapes_torch.py reads: NAME.txt (key value lines) and raw
// little-endian arrays NAME.ptr.i32, .idx.i32, .val.i32, .alpha.f64 (the
// K = 1 vector) and .loglik.f64 (dirmn's per-row log pmf under it).
inline bool dump(const std::string& dir, const std::string& name, const Csr& c,
                 const std::vector<double>& alpha, const std::vector<double>& loglik, int threads) {
  const std::string p = dir + "/" + name;
  std::ofstream meta(p + ".txt");
  meta << "rows " << c.rows << "\ncols " << c.cols << "\nnnz " << c.nnz() << "\nthreads " << threads << "\n";
  return static_cast<bool>(meta) && write_raw(p + ".ptr.i32", c.ptr.data(), c.ptr.size()) &&
         write_raw(p + ".idx.i32", c.idx.data(), c.idx.size()) &&
         write_raw(p + ".val.i32", c.val.data(), c.val.size()) &&
         write_raw(p + ".alpha.f64", alpha.data(), alpha.size()) &&
         write_raw(p + ".loglik.f64", loglik.data(), loglik.size());
}

}  // namespace shapes
