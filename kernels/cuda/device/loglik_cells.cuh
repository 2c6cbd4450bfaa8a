// loglik_cells.cuh: reading a table's counts on the device -- a vector of
// cells as loaded (RawVec), one cell of it as a double or as a table index,
// the test that puts a whole vector on the table path, and single cells and
// CSR columns by index. Device code only; loglik_types.cuh has the layouts.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../loglik_types.cuh"

namespace dirmn {
namespace cuda {
namespace dev {

// A vector of W cells of type C as loaded from memory: Bytes = W * size.
template <int Bytes>
struct RawVec;
template <>
struct RawVec<16> {
  uint32_t w[4];
  __device__ __forceinline__ void load(const void* p) {
    const uint4 v = __ldg(static_cast<const uint4*>(p));
    w[0] = v.x; w[1] = v.y; w[2] = v.z; w[3] = v.w;
  }
};
template <>
struct RawVec<8> {
  uint32_t w[2];
  __device__ __forceinline__ void load(const void* p) {
    const uint2 v = __ldg(static_cast<const uint2*>(p));
    w[0] = v.x; w[1] = v.y;
  }
};
template <>
struct RawVec<4> {
  uint32_t w[1];
  __device__ __forceinline__ void load(const void* p) {
    w[0] = __ldg(static_cast<const unsigned int*>(p));
  }
};
template <>
struct RawVec<2> {
  uint32_t w[1];
  __device__ __forceinline__ void load(const void* p) {
    w[0] = __ldg(static_cast<const unsigned short*>(p));
  }
};
template <>
struct RawVec<1> {
  uint32_t w[1];
  __device__ __forceinline__ void load(const void* p) {
    w[0] = __ldg(static_cast<const unsigned char*>(p));
  }
};

template <CellType C>
struct CellTraits;
template <>
struct CellTraits<CellType::U8> {
  static constexpr int kBytes = 1;
  static constexpr bool kIntegral = true;
};
template <>
struct CellTraits<CellType::U16> {
  static constexpr int kBytes = 2;
  static constexpr bool kIntegral = true;
};
template <>
struct CellTraits<CellType::U32> {
  static constexpr int kBytes = 4;
  static constexpr bool kIntegral = true;
};
template <>
struct CellTraits<CellType::I32> {
  static constexpr int kBytes = 4;
  static constexpr bool kIntegral = true;
};
template <>
struct CellTraits<CellType::F32> {
  static constexpr int kBytes = 4;
  static constexpr bool kIntegral = false;
};
template <>
struct CellTraits<CellType::F64> {
  static constexpr int kBytes = 8;
  static constexpr bool kIntegral = false;
};

// Cell j of a loaded vector, as a double (exact for every stored count).
template <CellType C, int W>
__device__ __forceinline__ double cell_value(const RawVec<W * CellTraits<C>::kBytes>& x, int j) {
  if constexpr (C == CellType::U8) {
    return static_cast<double>((x.w[j / 4] >> (8 * (j % 4))) & 0xffu);
  } else if constexpr (C == CellType::U16) {
    return static_cast<double>((x.w[j / 2] >> (16 * (j % 2))) & 0xffffu);
  } else if constexpr (C == CellType::U32) {
    return static_cast<double>(x.w[j]);
  } else if constexpr (C == CellType::I32) {
    return static_cast<double>(static_cast<int32_t>(x.w[j]));
  } else if constexpr (C == CellType::F32) {
    return static_cast<double>(__uint_as_float(x.w[j]));
  } else {
    return __hiloint2double(static_cast<int>(x.w[2 * j + 1]), static_cast<int>(x.w[2 * j]));
  }
}

// 2^23: adding it to a float in [0, 2^23) leaves the integer part in the
// mantissa bits, a cheaper float-to-int than the conversion unit.
constexpr float kFloatIntMagic = 8388608.0f;
constexpr int kFloatIntMagicBits = 0x4B000000;

// Cell j as an int, valid when the vector passed fits_table() (so the
// count is an integer below the table cut).
template <CellType C, int W>
__device__ __forceinline__ int cell_index(const RawVec<W * CellTraits<C>::kBytes>& x, int j) {
  if constexpr (C == CellType::U8) {
    return static_cast<int>((x.w[j / 4] >> (8 * (j % 4))) & 0xffu);
  } else if constexpr (C == CellType::U16) {
    return static_cast<int>((x.w[j / 2] >> (16 * (j % 2))) & 0xffffu);
  } else if constexpr (C == CellType::U32 || C == CellType::I32) {
    return static_cast<int>(x.w[j]);
  } else if constexpr (C == CellType::F32) {
    return __float_as_int(__uint_as_float(x.w[j]) + kFloatIntMagic) - kFloatIntMagicBits;
  } else {
    return static_cast<int>(cell_value<C, W>(x, j));
  }
}

// True when every cell of the vector is an integer below `cut`, so all of
// them are table lookups.
template <CellType C, int W>
__device__ __forceinline__ bool fits_table(const RawVec<W * CellTraits<C>::kBytes>& x, int cut,
                                           bool integral) {
  if constexpr (C == CellType::U8 && W == 16) {
    unsigned m = __vmaxu4(__vmaxu4(x.w[0], x.w[1]), __vmaxu4(x.w[2], x.w[3]));
    m = __vmaxu4(m, m >> 16);
    m = __vmaxu4(m, m >> 8);
    return static_cast<int>(m & 0xffu) < cut;
  } else if constexpr (C == CellType::U8 || C == CellType::U16 || C == CellType::U32) {
    uint32_t m = 0;
#pragma unroll
    for (int j = 0; j < W; ++j) m = max(m, static_cast<uint32_t>(cell_index<C, W>(x, j)));
    return m < static_cast<uint32_t>(cut);
  } else if constexpr (C == CellType::I32) {
    int m = 0;
#pragma unroll
    for (int j = 0; j < W; ++j) m = max(m, static_cast<int>(x.w[j]));
    return m < cut;
  } else if constexpr (C == CellType::F32) {
    if (!integral) return false;
    float m = 0.0f;
#pragma unroll
    for (int j = 0; j < W; ++j) m = fmaxf(m, __uint_as_float(x.w[j]));
    return m < static_cast<float>(cut);
  } else {
    bool ok = true;
#pragma unroll
    for (int j = 0; j < W; ++j) {
      const double n = cell_value<C, W>(x, j);
      ok = ok && n < static_cast<double>(cut) && n == floor(n);
    }
    return ok;
  }
}

// One stored cell of any type, by element index.
template <CellType C>
__device__ __forceinline__ double load_cell(const void* values, int64_t idx) {
  if constexpr (C == CellType::U8) {
    return static_cast<double>(__ldg(static_cast<const unsigned char*>(values) + idx));
  } else if constexpr (C == CellType::U16) {
    return static_cast<double>(__ldg(static_cast<const unsigned short*>(values) + idx));
  } else if constexpr (C == CellType::U32) {
    return static_cast<double>(__ldg(static_cast<const unsigned int*>(values) + idx));
  } else if constexpr (C == CellType::I32) {
    return static_cast<double>(__ldg(static_cast<const int*>(values) + idx));
  } else if constexpr (C == CellType::F32) {
    return static_cast<double>(__ldg(static_cast<const float*>(values) + idx));
  } else {
    return __ldg(static_cast<const double*>(values) + idx);
  }
}

template <bool kCol16>
__device__ __forceinline__ int64_t load_col(const void* col, int64_t e) {
  if constexpr (kCol16) {
    return static_cast<int64_t>(__ldg(static_cast<const unsigned short*>(col) + e));
  } else {
    return static_cast<int64_t>(__ldg(static_cast<const unsigned int*>(col) + e));
  }
}

}  // namespace dev
}  // namespace cuda
}  // namespace dirmn
