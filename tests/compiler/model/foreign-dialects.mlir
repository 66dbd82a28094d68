// An op of another project's dialect in a model is a parse error at its
// location, with a note on how to bring such a model in.
// RUN: not compile-module %S/Inputs/scan.mlir -o %t.smod 2>&1 | FileCheck %s
// CHECK: scan.mlir:8:10: error: Dialect `tm_tensor' not found for custom op 'tm_tensor.scan'
// CHECK: scan.mlir:8:10: note: tm_tensor is torch-mlir's own dialect (tm_tensor.scan is a cumsum, tm_tensor.scatter an index_put); import the model with tools/import/strata-import-torch, which decomposes cumsum into linalg ops, or rewrite the op in linalg
