// A check outside a kernel body prepared by strata-cpu-wrap-kernel-abi has
// no status to return: an error at its location, not a call to abort.
// RUN: strata-opt %s --strata-cpu-lower-checks --verify-diagnostics

func.func @unwrapped(%ok: i1) {
  // expected-error @below {{cannot be reported: the function around it returns no i32 status}}
  cf.assert %ok, "never"
  return
}
