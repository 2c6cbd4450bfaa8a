// random.hpp: a counter-based random generator, the same on the host and on
// the device.
//
// A seed must give the same draws on every backend and platform (the
// mixture initialisation promises it; sampling will rest on it). A
// counter-based generator makes draw i of a stream a pure function of
// (key, i): a device thread can take any draw without the ones before it,
// and the host's sequence is the same numbers in order. The function is
// splitmix64's output mix (Steele, Lea & Flood 2014, "Fast splittable
// pseudorandom number generators", OOPSLA; the finalizer constants are
// those of its reference implementation) applied to key + (i + 1) * gamma,
// which is exactly what a splitmix64 state started at `key` returns as its
// (i + 1)-th output.
#pragma once

#include <cstdint>

#include "special.hpp"  // DIRMN_HD

namespace dirmn {
namespace math {

// splitmix64's increment: the odd integer closest to 2^64 / golden ratio.
constexpr uint64_t kRandomGamma = 0x9e3779b97f4a7c15ULL;

// Draw `counter` (0-based) of the stream `key`: 64 random bits.
DIRMN_HD uint64_t random_bits(uint64_t key, uint64_t counter) {
  uint64_t z = key + (counter + 1) * kRandomGamma;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// 53 random bits as a double in [0, 1).
DIRMN_HD double random_uniform(uint64_t key, uint64_t counter) {
  return static_cast<double>(random_bits(key, counter) >> 11) * 0x1.0p-53;
}

// 53 random bits as a double in (0, 1]: never 0, so its log is finite.
DIRMN_HD double random_uniform_open(uint64_t key, uint64_t counter) {
  return static_cast<double>((random_bits(key, counter) >> 11) + 1) * 0x1.0p-53;
}

// Streams derived from a caller's seed. A mixture's start s takes the key
// seed * kSeedMultiplier + s (its draws are fixed by that since 0.2); other
// families take a key mixed from (seed, family, index), so that no two
// families or indices share a stream.
constexpr uint64_t kSeedMultiplier = 0x2545F4914F6CDD1DULL;
DIRMN_HD uint64_t start_key(uint64_t seed, uint64_t start) { return seed * kSeedMultiplier + start; }

// The families of derived_key.
constexpr uint64_t kFamilySampleRows = 1;  // dirmn_sample: one stream per row
constexpr uint64_t kFamilyBootstrap = 2;   // a bootstrap: one seed per replicate
constexpr uint64_t kFamilyPower = 3;       // a power simulation: one seed per table

DIRMN_HD uint64_t derived_key(uint64_t seed, uint64_t family, uint64_t index) {
  return random_bits(random_bits(seed, family), index);
}

// The draws of one stream in order, for code that takes them one by one.
struct RandomStream {
  uint64_t key = 0;
  uint64_t counter = 0;
  DIRMN_HD uint64_t bits() { return random_bits(key, counter++); }
  DIRMN_HD double uniform() { return random_uniform(key, counter++); }
  DIRMN_HD double uniform_open() { return random_uniform_open(key, counter++); }
  // An integer in [0, n), n >= 1.
  DIRMN_HD int64_t below(int64_t n) {
    return static_cast<int64_t>(uniform() * static_cast<double>(n)) % n;
  }
};

}  // namespace math
}  // namespace dirmn
