// tuning.cuh: the tuning constants of the CUDA backend -- block sizes,
// budgets, cut-offs, rows per block, pipeline depths, grid limits -- each
// with the rule it follows. Facts of the hardware, of a layout or of the
// mathematics stay with the code they describe, and so do the constants
// that the units keep to themselves.
//
// What several files use sits in dirmn::cuda. What one launch unit alone
// uses sits in a namespace named after it (ingest_tuning, hist_tuning,
// tensor_hist_tuning, mstep_tuning, tensor_lik_tuning), which that unit's
// kernel header brings into scope.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dirmn {
namespace cuda {

// ---------------------------------------------------------------------------
// Likelihood kernels (loglik_*.cuh)

// Threads of every loglik kernel block: 8 warps.
constexpr int kBlockThreads = 256;
// Rows one lane group carries at once. Four independent rows keep four
// vector loads in flight per lane, which short rows need to cover memory
// latency.
constexpr int kRowsPerGroup = 4;
// The CSR kernel's lane groups carry two rows: each holds two 16-byte
// blocks (values and columns) per row, twice over for the prefetch.
constexpr int kCsrRowsPerGroup = 2;
// Dense lane groups evaluating several parameter vectors carry two rows:
// their accumulators take the registers the other two rows would.
constexpr int kMultiKRowsPerGroup = 2;
// Parameter vectors one CSR block evaluates per pass over its rows when
// K > 1 (dense blocks take bundle_vectors).
constexpr int kMaxKGroup = 4;
// Blocks per multiprocessor the shared-alpha kernels are compiled for: two,
// so that one block's table copy overlaps the other's loads.
constexpr int kSharedBlocksPerSm = 2;
// Shared memory one block may spend on tables: kSharedBlocksPerSm such
// blocks (plus their runtime reserve) fit one Hopper multiprocessor's 228 KB.
constexpr size_t kTableBudgetBytes = 96 * 1024;
// Tabulated counts run to at most this cut (exclusive); larger counts take
// the direct lpoch path. Real tables are dominated by small counts.
constexpr int kMaxCut = 64;
// A CSR table whose shared-memory plan needs more column panels than this
// reads its tables from global memory instead (TablePlan::l2_tables): each
// panel walks every row's pointers and a short piece of the row, so on
// wide tables (20000 columns at a cut of 64 are 105 panels of 192) most
// lanes idle; through L2 the rows are walked once, every lane busy, and a
// lookup costs an L2 (often L1) hit instead of a shared-memory one.
constexpr int kCsrMaxSharedPanels = 2;
// ... and tabulates counts only as far as one vector's table stays within
// this many bytes. Most lookups are of counts 1-3, whose rows of the table
// (a few hundred KB per vector) stay resident in L2 (50 MB on Hopper)
// beside the stream of counts; the deeper rows are read rarely.
constexpr size_t kL2TableBytes = size_t{16} << 20;
// Row terms lpoch(A, N) - N log A are tabulated for N below this; rows with
// larger totals evaluate theirs directly.
constexpr int64_t kRowTermMax = int64_t{1} << 16;
// Panel counts balanced_panel_width tries above the fewest: one or two more
// usually remove a narrow last panel; beyond that, padding only grows.
constexpr int64_t kPanelCountsTried = 8;
// Vectors a lane of shared_alpha_dense_small keeps in flight: 16 cells'
// worth whatever their width. A 256-column row of 8-bit counts is then one
// 16-byte vector per lane of a half-warp, and one of 32-bit cells (a
// caller's float32 array) four vectors per lane of a warp, whose loads
// would otherwise wait on each other.
template <int W>
constexpr int kSmallDepth = W >= 16 ? 1 : 16 / W;
// Blocks per multiprocessor of the row-wise kernels: a few waves of one row
// per warp.
constexpr int kRowwiseBlocksPerSm = 16;

// ---------------------------------------------------------------------------
// Grids

// Grids are split into launches of at most this many blocks in y.
constexpr int64_t kMaxGridY = 65535;
// Blocks per multiprocessor of the grid-stride kernels (statistics,
// validation, gathers): enough to hide memory latency.
constexpr int kStrideBlocksPerSm = 8;

// ---------------------------------------------------------------------------
// The E step (estep.cu)

// Row runs of the E step's deterministic column sums.
constexpr int64_t kEmReduceRows = 256;
// Up to this many components, lanes of a warp take a row's components
// together (coalesced, each exp once) and the E step finishes the
// likelihood kernel's panels itself.
constexpr int64_t kEmGroupMaxK = 32;
// ... and finishes up to this many panels itself (more are finished first).
constexpr int kEmFusedPanels = 8;

// ---------------------------------------------------------------------------
// Device tables from a caller's arrays (ingest_*.cu)

namespace ingest_tuning {
// Minor-dimension cells per block and major-dimension cells per thread of
// the strided-source kernels: a block's threads take consecutive minor
// cells, so a warp's reads coalesce, and each walks several major ones.
constexpr int kTileMinor = kBlockThreads;
constexpr int kTileMajor = 8;
}  // namespace ingest_tuning

// ---------------------------------------------------------------------------
// Column and row-total histograms (histogram.cu)

namespace hist_tuning {
constexpr int kHistThreads = kBlockThreads;
// Private-counter kernel: each thread counts C adjacent columns (one load
// of C 8-bit cells per row) over its rows, in shared-memory counters of its
// own, so no atomics are needed and no two lanes share a bank. Four columns
// per thread for double counters too: one column per thread would run
// twice the threads but issue four times the loads per cell.
constexpr int kPrivColsCounts = 4;   // 32-bit counters
constexpr int kPrivColsWeights = 4;  // double counters
// Rows a thread loads before it counts them.
constexpr int kPrivRowsInFlight = 16;
// Shared memory the private counters of one block may take.
constexpr size_t kPrivSharedBytes = 100 * 1024;
// Blocks per SM the private-counter kernels are compiled for: the
// register-counting one (kNibbles) holds few registers per thread, so a
// third block hides more latency.
template <bool kNibbles>
constexpr int kPrivBlocksPerSm = kNibbles ? 3 : 2;
// Partial histograms a thread of the first summing pass adds.
constexpr int64_t kPartialsPerThread = 16;
// Atomic fallback (bins beyond what private counters fit): doubles of one
// block's shared histogram tile, 48 KB.
constexpr int64_t kTileEntries = 6144;
constexpr int kTileBlocksPerSm = 4;
// Weightings one pass of total_run_sums adds at once (one 64-byte read of
// a row's weights).
constexpr int64_t kRunWeightings = 8;
}  // namespace hist_tuning

// ---------------------------------------------------------------------------
// Tensor-core histograms (tensor_histogram.cu)

namespace tensor_hist_tuning {
// Warps of a block: eight, so that one 16-byte copy per thread stages a
// chunk (kMaxBlockCols columns and their weight digits).
constexpr int kTensorWarps = 8;
// 16-pair tiles a warp takes per chunk: two tiles of eight digits keep 64
// accumulators, as many as kTensorBlocksPerSm blocks per SM leave
// registers for.
constexpr int kTilesPerWarp = 2;
// Two blocks per SM: one block's waits at its barriers overlap the other's
// MMAs.
constexpr int kTensorBlocksPerSm = 2;
// Chunks in flight per block (cp.async stages): 4 KB each, enough bytes in
// flight per SM to cover memory latency at full bandwidth.
constexpr int kStages = 8;
constexpr int kChunksPerSync = 2;  // chunks computed between two barriers
// The warpgroup form keeps more stages in flight than the mma.sync one:
// its MMAs are faster, and every step of kWgChunksPerSync chunks ends with
// all of them complete (their B stages are refilled after the next
// barrier). Twelve is also the most that static shared memory holds.
constexpr int kWgStages = 12;
constexpr int kWgChunksPerSync = 4;
// The chunks-per-split search (tensor_chunks_per_split): a block's fixed
// work (its pipeline's fill and its writes) counted as this many chunks,
// the waves tried, and the most the splits' partial sums may take.
constexpr int64_t kBlockOverheadChunks = 16;
constexpr int64_t kMaxWavesTried = 16;
constexpr int64_t kMaxPartialBytes = int64_t{64} << 20;
}  // namespace tensor_hist_tuning

// ---------------------------------------------------------------------------
// Tensor-core likelihoods (tensor_loglik.cu)

namespace mstep_tuning {
// Threads of a component's M-step fit block: its sums over columns and
// the row-total histogram are block-wide reductions, and a wide block
// spreads a component's columns thinly.
constexpr int kFitThreads = 512;
}  // namespace mstep_tuning

// ---------------------------------------------------------------------------
// The backend's host side (cuda_backend.cu, cuda_histograms.cu)

// Uploads up to this size go through the page-locked staging buffer;
// larger ones are copied from the caller's (pageable) memory, which the
// runtime stages itself before cudaMemcpyAsync returns.
constexpr size_t kStagingMax = size_t{64} << 20;
// Downloaded histograms become the host's dense form in blocks of this many
// columns; from kParallelFormCols columns (over all weightings) on, the
// blocks run on the context's host threads.
constexpr int64_t kFormBlockCols = 128;
constexpr int64_t kParallelFormCols = 512;

namespace tensor_lik_tuning {
// Fewer vectors than this are cheaper through the lookup tables: the MMA
// works on groups of eight.
constexpr int64_t kTensorLoglikMinK = 4;
// Threads of the per-vector range reduction: one block per vector reduces
// all its columns, so the block is as large as blocks go.
constexpr int kScaleThreads = 1024;
// mma.sync form: warps per block, row groups of 8 a warp carries (its
// accumulators), blocks per SM, and slabs staged (one in use while the next
// one loads).
constexpr int kLikWarps = 8;
constexpr int kGroupsPerWarp = 4;
constexpr int kLikBlocksPerSm = 2;
constexpr int kLikStages = 2;
// Warpgroup form: warpgroups per block and 64-row M blocks per warpgroup,
// so that a block takes the rows of the mma.sync form's (one bound on the
// grids serves both), and blocks per SM.
constexpr int kWgGroups = 2;
constexpr int kWgMBlocks = 2;
constexpr int kWgBlocksPerSm = 2;
// Slabs of B staged ahead (cp.async): a slab's MMAs alone do not cover the
// latency of the next one's copy.
constexpr int kWgStages = 3;
}  // namespace tensor_lik_tuning

// dirmn_sample's row kernels (device/sample_kernels.cuh): 128 threads a
// block, at least kSampleMinBlocks blocks resident per multiprocessor. A
// row's draw is long chains of dependent double operations; more rows in
// flight hide their latency better than the registers the compiler would
// otherwise keep (on an H100, 8 blocks drew 10^6 x 1000 rows of 10^4
// counts in 0.235 s, against 0.281 s with the compiler's choice and 0.282 s
// at 4).
constexpr int kSampleBlock = 128;
constexpr int kSampleMinBlocks = 8;

}  // namespace cuda
}  // namespace dirmn
