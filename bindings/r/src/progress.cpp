// progress.cpp: the progress callback of fits and mixtures, which calls an
// R function without letting R's jumps cross the library (see common.h).
#include "common.h"

using namespace dirmn_r;

namespace {

struct ProgressCall {
  ProgressBridge* bridge;
  int iteration;
  double value, change;
  bool stop;
};

SEXP progress_eval(void* data) {
  auto* c = static_cast<ProgressCall*>(data);
  SEXP it = PROTECT(Rf_ScalarInteger(c->iteration));
  SEXP value = PROTECT(Rf_ScalarReal(c->value));
  SEXP change = PROTECT(Rf_ScalarReal(c->change));
  SEXP call = PROTECT(Rf_lang4(c->bridge->fn, it, value, change));
  SEXP res = Rf_eval(call, R_GlobalEnv);
  c->stop = TYPEOF(res) == LGLSXP && XLENGTH(res) == 1 && LOGICAL(res)[0] == TRUE;
  UNPROTECT(4);
  return R_NilValue;
}

void progress_unwound(void* data, Rboolean jump) {
  if (jump) std::longjmp(static_cast<ProgressBridge*>(data)->jump_buffer, 1);
}

}  // namespace

namespace dirmn_r {

int progress_callback(int iteration, double value, double change, void* user) {
  auto* bridge = static_cast<ProgressBridge*>(user);
  if (bridge->jumped) return 1;
  ProgressCall call{bridge, iteration, value, change, false};
  if (setjmp(bridge->jump_buffer)) {
    bridge->jumped = true;
    return 1;
  }
  R_UnwindProtect(progress_eval, &call, progress_unwound, bridge, bridge->token);
  return call.stop ? 1 : 0;
}

void resume_jump(SEXP token) {
  // Kept alive while C++ frames unwind; Rcpp releases it when it resumes.
  R_PreserveObject(token);
  throw Rcpp::LongjumpException(token);
}

}  // namespace dirmn_r
