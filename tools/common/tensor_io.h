// tensor_io: tensors and scalars as the runtime tools read, print, save and
// compare them (run-module and benchmark-module; the C API next).
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
// NumPy files: reading accepts format versions 1, 2 and 3, little-endian (or
// byte-order-free) dtypes in C order; fortran_order, big-endian data and
// other dtypes are refused with a message saying so. Writing produces
// version 1 with the result's own dtype (<f4, <f2, <f8, |b1, |i1, <i2, <i4,
// <i8, |u1, <u2, <u4, <u8). bf16 has no NumPy dtype: it is written as <u2
// holding the raw bits (view it with ml_dtypes.bfloat16), and reads back as
// ui16; a ui16 expected output is compared bit for bit against a bf16 result.
//
// Comparison: floats match when |actual - expected| <= atol + rtol * |expected|
// (numpy.isclose), NaN matches NaN and infinities match themselves; integers
// and i1 must be equal. A mismatch names the first differing element's index.
//
// Thread safety: free functions over values; no shared state.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/buffer_view.h"
#include "hal/device.h"
#include "vm/base/float16.h"
#include "vm/base/status.h"
#include "vm/value.h"

namespace strata::tools {

// A tensor (or scalar) in host memory: the elements packed in row-major
// order, little-endian, element_count() * ElementTypeByteSize bytes.
struct Tensor {
  hal::ElementType element_type = hal::ElementType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  // Written as TYPE=VALUE (or a VM scalar result): passed to and from the VM
  // as a scalar, not as a buffer view. Implies an empty shape.
  bool scalar = false;

  uint64_t element_count() const;
  // "2x3xf32"; "f32" for scalars and 0-d tensors.
  std::string DescribeType() const;
};

// "f32" -> kFloat32, ... ; fails naming the accepted names.
StatusOr<hal::ElementType> ParseElementType(std::string_view name);


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

// NumPy .npy files (see above for what is accepted and written).
StatusOr<Tensor> ParseNpy(std::span<const uint8_t> bytes);
StatusOr<Tensor> ReadNpyFile(const std::string& path);
std::vector<uint8_t> EncodeNpy(const Tensor& tensor);
Status WriteNpyFile(const std::string& path, const Tensor& tensor);

// Whole files; errors name the path and strerror.
StatusOr<std::vector<uint8_t>> ReadFile(const std::string& path);
Status WriteFile(const std::string& path, std::span<const uint8_t> bytes);

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};

struct Comparison {
  bool match = false;
  uint64_t element_count = 0;
  uint64_t mismatch_count = 0;
  // Over the elements where both values are finite.
  double max_abs_diff = 0;
  // Why it does not match: "expected a tensor 2x3xf32, got 3x2xf32",
  // "element [0, 3]: expected 4, got 4.5 (|diff| 0.5 > atol 1e-06 + rtol 1e-05 * |expected|);
  // 1 of 6 elements differ". Empty on a match.
  std::string message;
};
Comparison CompareTensors(const Tensor& expected, const Tensor& actual, const Tolerance& tolerance);

// "[0, 3]" for row-major element `index` of `shape`; "[]" for rank 0.
std::string FormatIndex(std::span<const int64_t> shape, uint64_t index);

// ---- VM and HAL values ----

// A new host-visible buffer from `allocator` holding a copy of the tensor,
// viewed with its shape and element type.
StatusOr<Ref<hal::BufferView>> CreateBufferView(hal::Allocator& allocator, const Tensor& tensor);
// The contents of `view`: mapped directly when its buffer is host-visible and
// mappable, otherwise copied through a staging buffer on `device`.
StatusOr<Tensor> ReadBufferView(hal::Device& device, const hal::BufferView& view);

// The argument for a parameter whose signature character is `type` ('i', 'I',
// 'f', 'F' or 'r'): a scalar (or 0-d tensor) of the matching type, or a
// tensor that becomes a buffer view from `allocator`. Errors say "expected
// i64, got f32", "expected a tensor, got the scalar f32=2.5", ...
StatusOr<vm::Value> TensorToValue(const Tensor& tensor, char type, hal::Allocator& allocator);
// A result: a scalar, or a buffer view read back through `device`; other refs
// fail naming their type.
StatusOr<Tensor> TensorFromValue(const vm::Value& value, hal::Device& device);

}  // namespace strata::tools
