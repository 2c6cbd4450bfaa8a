// The test runner. `--require-cuda` (first argument) makes the run exit with
// 77, which ctest reports as skipped, when no CUDA device is usable: GPU
// cases are then reported as not run instead of silently passing.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

#include "support.hpp"

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  if (args.size() > 1 && std::strcmp(args[1], "--require-cuda") == 0) {
    args.erase(args.begin() + 1);
    if (!dirmn_test::cuda_device_present()) {
      std::fprintf(stderr, "no usable CUDA device (or CUDA not compiled in): [cuda] cases skipped\n");
      return 77;
    }
  }
  return Catch::Session().run(static_cast<int>(args.size()), args.data());
}
