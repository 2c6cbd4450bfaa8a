// comm.cpp: the votes and gathers of a collective call.
#include "comm.hpp"

namespace dirmn {

BackendResult Collective::agree(const BackendResult& local) {
  ++votes_;
  // Up to kInlineRanks ranks the ballot needs no memory: a rank that ran
  // out of it can still vote, and so release the others.
  const size_t n = static_cast<size_t>(comm_.ranks());
  int64_t inline_ballot[kInlineRanks] = {};
  std::vector<int64_t> heap;
  if (n > kInlineRanks) heap.assign(n, 0);
  int64_t* failed = n > kInlineRanks ? heap.data() : inline_ballot;
  failed[comm_.rank()] = static_cast<int64_t>(local.status);
  const BackendResult r = comm_.allreduce(failed, n);
  if (!local.ok()) return local;
  if (!r.ok()) return r;
  for (size_t i = 0; i < n; ++i) {
    if (failed[i] == 0) continue;
    // A cancelled rank cancels the call: every rank reports it as its own.
    if (failed[i] == DIRMN_ERROR_CANCELLED) return {DIRMN_ERROR_CANCELLED, "", 0};
    return {DIRMN_ERROR_COMMUNICATION, "", static_cast<int>(i)};
  }
  return {};
}

BackendResult Collective::gather(int64_t x, std::vector<int64_t>* out) {
  out->assign(static_cast<size_t>(comm_.ranks()), 0);
  (*out)[static_cast<size_t>(comm_.rank())] = x;
  return comm_.allreduce(out->data(), out->size());
}

BackendResult Collective::gather(double x, std::vector<double>* out) {
  out->assign(static_cast<size_t>(comm_.ranks()), 0.0);
  (*out)[static_cast<size_t>(comm_.rank())] = x;
  return comm_.allreduce(out->data(), out->size());
}

}  // namespace dirmn
