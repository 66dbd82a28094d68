// tensor_text: tensors and scalars as the runtime tools read and print them.
//
// One text syntax serves inputs, printed results and expected outputs, so a
// printed result can be pasted back as an input:
//
//   i32=5   i64=-3   f32=2.5   f64=1e-300   i1=1    a scalar (a VM i32/i64/f32/f64;
//                                                   i1 travels as an i32)
//   2x3xf32=1 2 3 4 5 6                             a tensor, values in row-major order,
//   2x3xf32=1,2,3,4,5,6                             separated by spaces or commas
//   2x3xf32=[[1 2 3][4 5 6]]                        with brackets, which must then match
//   2x3xf32=[1 2 3][4 5 6]                          the shape (IREE's form, without the
//   2x3xf32=[1 2 3 4 5 6]                           outer pair, and one flat pair are read too)
//   1000x1000xf32=0.5                               a splat: one value fills the tensor
//   @x.npy                                          a whole tensor from a NumPy file
//   2x3xf32=@x.bin                                  raw little-endian bytes (size checked;
//                                                   a .npy file there must match the type)
//
// Element types: f16, bf16, f32, f64, i1 (one byte per element, 0 or 1; also
// written true/false), i8, i16, i32, i64, ui8, ui16, ui32, ui64. Integers are
// decimal or 0x-prefixed hex and must fit their type; floats are decimal (or
// C hex floats), inf, -inf and nan, rounded to nearest-even, and must not
// overflow their type except as an explicit inf. f16 and bf16 are converted
// here (no compiler or CPU support needed).
//
// The bare TYPE=VALUE form is always a scalar, never a 0-d tensor; a 0-d
// tensor comes from a .npy file of shape (). A 0-d tensor prints like a
// scalar, and comparisons treat the two alike.
//
// Printing uses the shortest decimal that reads back to the same value, and
// elides tensors of more than `max_elements` elements numpy-style: the first
// and last 3 entries along each dimension with `...` between them.
//
//
// Thread safety: free functions over values; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tools/common/tensor.h"

namespace strata::tools {

// Parses the syntax above. Errors name the bad token (and for tensors its
// position, "value 4 of 2x3xf32"); callers prefix which input it was.
// Files named with @ are read relative to the working directory.
StatusOr<Tensor> ParseTensor(std::string_view text);

struct PrintOptions {
  // Tensors with more elements than this are elided; 0 prints everything.
  uint64_t max_elements = 1024;
};
// "i64=5050", "2x3xf32=[[1 2 3][4 5 6]]", "0x3xi8=[]".
std::string FormatTensor(const Tensor& tensor, const PrintOptions& options = {});
// Element `index` (row-major) as it prints: "0.5", "-3", "nan".
std::string FormatElement(const Tensor& tensor, uint64_t index);

}  // namespace strata::tools
