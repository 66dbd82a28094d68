// tensor_io: the text syntax (every form and element type, and its errors),
// f16/bf16 conversion, printing and its round trip through parsing, .npy
// files (every dtype, 0-d, every truncation, bad headers), comparison, and
// tensors to and from buffer views on a real device.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <unistd.h>

#include "drivers/registry.h"
#include "tools/common/file_io.h"
#include "vm/base/float16.h"
#include "tools/common/numpy_io.h"
#include "tools/common/tensor_compare.h"
#include "tools/common/tensor_text.h"
#include "tools/common/tensor_values.h"

namespace strata::tools {
namespace {

using hal::ElementType;

Tensor Parse(std::string_view text) {
  auto tensor = ParseTensor(text);
  INFO("parsing '", std::string(text), "'");
  REQUIRE_MESSAGE(tensor.ok(), tensor.status().ToString());
  return std::move(tensor).value();
}

std::string ParseError(std::string_view text) {
  auto tensor = ParseTensor(text);
  INFO("parsing '", std::string(text), "'");
  REQUIRE_FALSE(tensor.ok());
  return tensor.status().message();
}

template <typename T>
std::vector<T> Values(const Tensor& tensor) {
  std::vector<T> out(tensor.bytes.size() / sizeof(T));
  std::memcpy(out.data(), tensor.bytes.data(), out.size() * sizeof(T));
  return out;
}

std::string TempPath(const char* name) {
  return StrCat("/tmp/tensor_io_test.", getpid(), ".", name);
}

// ---- syntax ----

TEST_CASE("scalars are TYPE=VALUE") {
  Tensor t = Parse("i32=5");
  CHECK(t.scalar);
  CHECK(t.shape.empty());
  CHECK(t.element_type == ElementType::kInt32);
  CHECK(Values<int32_t>(t) == std::vector<int32_t>{5});
  CHECK(Values<double>(Parse("f64=-2.5e-300")) == std::vector<double>{-2.5e-300});
  CHECK(Values<int64_t>(Parse("i64=-0x10")) == std::vector<int64_t>{-16});
  CHECK(Values<uint8_t>(Parse("i1=true")) == std::vector<uint8_t>{1});
}

TEST_CASE("tensors: flat, commas, nested, IREE's form, one outer pair") {
  const std::vector<float> expected = {1, 2, 3, 4, 5, 6};
  for (const char* text : {"2x3xf32=1 2 3 4 5 6", "2x3xf32=1,2,3,4,5,6", "2x3xf32=1, 2, 3,\n4 ,5,6",
                           "2x3xf32=[[1 2 3][4 5 6]]", "2x3xf32=[[1, 2, 3], [4, 5, 6]]",
                           "2x3xf32=[1 2 3][4 5 6]", "2x3xf32=[1 2 3 4 5 6]", "2x3xf32= [ [1 2 3] [4 5 6] ] "}) {
    Tensor t = Parse(text);
    CHECK_FALSE(t.scalar);
    CHECK(t.shape == std::vector<int64_t>{2, 3});
    CHECK(Values<float>(t) == expected);
  }
  CHECK(Values<int8_t>(Parse("2x2x2xi8=[[[1 2][3 4]][[5 6][7 8]]]")) ==
        std::vector<int8_t>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(Values<int8_t>(Parse("3xi8=[1 2 3]")) == std::vector<int8_t>{1, 2, 3});
  CHECK(Values<int8_t>(Parse("1x3xi8=[[1 2 3]]")) == std::vector<int8_t>{1, 2, 3});
}

TEST_CASE("a single value fills the tensor") {
  Tensor t = Parse("1000x1000xf32=0.5");
  CHECK(t.element_count() == 1000000);
  std::vector<float> values = Values<float>(t);
  CHECK(std::all_of(values.begin(), values.end(), [](float v) { return v == 0.5f; }));
  CHECK(Values<int16_t>(Parse("7xi16=-3")) == std::vector<int16_t>(7, -3));
  // With brackets it is a list, which must have every value.
  CHECK(ParseError("2xf32=[1]") == "2xf32 needs 2 values (or 1 to fill it), got 1");
}

TEST_CASE("empty tensors") {
  CHECK(Parse("0xf32=").bytes.empty());
  CHECK(Parse("0x3xf32=[]").shape == std::vector<int64_t>{0, 3});
  CHECK(Parse("2x0xi8=[[][]]").element_count() == 0);
}

TEST_CASE("every element type, at its limits") {
  CHECK(Values<int8_t>(Parse("2xi8=-128 127")) == std::vector<int8_t>{-128, 127});
  CHECK(Values<int16_t>(Parse("2xi16=-32768 32767")) == std::vector<int16_t>{-32768, 32767});
  CHECK(Values<int32_t>(Parse("2xi32=-2147483648 2147483647")) == std::vector<int32_t>{INT32_MIN, INT32_MAX});
  CHECK(Values<int64_t>(Parse("2xi64=-9223372036854775808 9223372036854775807")) ==
        std::vector<int64_t>{INT64_MIN, INT64_MAX});
  CHECK(Values<uint8_t>(Parse("2xui8=0 255")) == std::vector<uint8_t>{0, 255});
  CHECK(Values<uint16_t>(Parse("2xui16=0 65535")) == std::vector<uint16_t>{0, 65535});
  CHECK(Values<uint32_t>(Parse("2xui32=0 0xffffffff")) == std::vector<uint32_t>{0, UINT32_MAX});
  CHECK(Values<uint64_t>(Parse("2xui64=0 18446744073709551615")) == std::vector<uint64_t>{0, UINT64_MAX});
  CHECK(Values<uint8_t>(Parse("4xi1=0 1 false true")) == std::vector<uint8_t>{0, 1, 0, 1});
  CHECK(Values<float>(Parse("3xf32=3.4028235e38 -1.4e-45 inf")) ==
        std::vector<float>{3.4028235e38f, -1.4e-45f, INFINITY});
  CHECK(Values<double>(Parse("2xf64=1.7976931348623157e308 4.9e-324")) ==
        std::vector<double>{1.7976931348623157e308, 4.9e-324});
  CHECK(Values<uint16_t>(Parse("3xf16=1 65504 -0")) == std::vector<uint16_t>{0x3C00, 0x7BFF, 0x8000});
  CHECK(Values<uint16_t>(Parse("3xbf16=1 -2 3.3895314e38")) == std::vector<uint16_t>{0x3F80, 0xC000, 0x7F7F});
  CHECK(std::isnan(Values<float>(Parse("f32=nan"))[0]));
  for (const char* name : {"f16", "bf16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32",
                           "ui64"}) {
    auto type = ParseElementType(name);
    REQUIRE(type.ok());
    CHECK(std::string(ElementTypeName(*type)) == name);
  }
}

TEST_CASE("syntax errors name the token, its position and what was expected") {
  CHECK(ParseError("i64=abc") == "cannot parse 'abc' as i64");
  CHECK(ParseError("2x3xf32=1 2 3 4 x 6") == "value 4 of 2x3xf32: cannot parse 'x' as f32");
  CHECK(ParseError("i8=128") == "cannot parse '128' as i8 (out of range for i8)");
  CHECK(ParseError("i8=-129") == "cannot parse '-129' as i8 (out of range for i8)");
  CHECK(ParseError("ui8=-1") == "cannot parse '-1' as ui8 (out of range for ui8)");
  CHECK(ParseError("ui64=18446744073709551616") ==
        "cannot parse '18446744073709551616' as ui64 (out of range for ui64)");
  CHECK(ParseError("i32=2.5") == "cannot parse '2.5' as i32");
  CHECK(ParseError("i1=2") == "cannot parse '2' as i1 (expected 0, 1, true or false)");
  CHECK(ParseError("f32=1e39") == "cannot parse '1e39' as f32 (out of range for f32)");
  CHECK(ParseError("f16=65520") == "cannot parse '65520' as f16 (out of range for f16)");
  CHECK(ParseError("f64=1e309") == "cannot parse '1e309' as f64 (out of range for f64)");
  CHECK(ParseError("f32=") == "expected one f32 value, got 0");
  CHECK(ParseError("f32=1 2") == "expected one f32 value, got 2");
  CHECK(ParseError("2x3xf32=1 2 3 4 5") == "2x3xf32 needs 6 values (or 1 to fill it), got 5");
  CHECK(ParseError("2x3xf32=1 2 3 4 5 6 7") == "2x3xf32 needs 6 values (or 1 to fill it), got 7");
  CHECK(ParseError("1xf32=1 2") == "1xf32 needs 1 value, got 2");
  CHECK(ParseError("f31=1") ==
        "unknown element type 'f31' (expected one of f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8, ui16, "
        "ui32, ui64)");
  CHECK(ParseError("2x?xf32=1") == "bad dimension '?' in '2x?xf32' (dimensions are non-negative integers, as in "
                                   "2x3xf32)");
  CHECK(ParseError("2xxf32=1") == "bad dimension '' in '2xxf32' (dimensions are non-negative integers, as in "
                                  "2x3xf32)");
  CHECK(ParseError("2x3xf32") == "expected TYPE=VALUE, SHAPExTYPE=VALUES or @FILE.npy (e.g. i32=5, "
                                 "2x3xf32=1 2 3 4 5 6), got '2x3xf32'");
  CHECK(ParseError("4294967296x4294967296xf32=0") == "the byte size of 4294967296x4294967296xf32 overflows 64 bits");
}

TEST_CASE("brackets must match the shape") {
  CHECK(ParseError("2x3xf32=[[1 2 3][4 5]]") == "2x3xf32 needs 6 values (or 1 to fill it), got 5");
  CHECK(ParseError("2x3xf32=[[1 2][3 4][5 6]]") ==
        "in the brackets at character 1 there are 3 groups, expected 2 (dimension 0 of 2x3xf32)");
  CHECK(ParseError("2x3xf32=[[1 2 3 4][5 6]]") ==
        "in the brackets at character 2 there are 4 values, expected 3 (dimension 1 of 2x3xf32)");
  CHECK(ParseError("2x3xf32=[1 2 3][4 5 6][]") ==
        "at the top level there are 3 groups, expected 2 (dimension 0 of 2x3xf32)");
  CHECK(ParseError("2x3xf32=[[1 2 3] 4 5 6]") ==
        "the brackets at character 1 hold both values and brackets; for 2x3xf32 write e.g. [[1 2 3][4 5 6]] or "
        "1 2 3 4 5 6");
  CHECK(ParseError("2x3xf32=[[[1 2 3][4 5 6]]]") ==
        "the values are nested 3 brackets deep, which does not match the shape 2x3xf32 (rank 2): write e.g. "
        "[[1 2 3][4 5 6]] for 2x3, or no brackets");
  CHECK(ParseError("2x3xf32=[[1 2 3][4 5 6]") == "unclosed '[' at character 1");
  CHECK(ParseError("2x3xf32=[1 2 3]][4 5 6]") == "unmatched ']' at character 8");
  CHECK(ParseError("2x2xf32=[[1 2]3 4]").find("hold both values and brackets") != std::string::npos);
}

// ---- f16 / bf16 ----

TEST_CASE("f16 and bf16 conversion rounds to nearest even") {
  CHECK(DoubleToF16(1.0) == 0x3C00);
  CHECK(DoubleToF16(65504) == 0x7BFF);
  CHECK(DoubleToF16(65519.99) == 0x7BFF);
  CHECK(DoubleToF16(65520) == 0x7C00);  // halfway to 2^16: even is infinity
  CHECK(DoubleToF16(-INFINITY) == 0xFC00);
  CHECK(DoubleToF16(std::ldexp(1.0, -24)) == 0x0001);  // the smallest subnormal
  CHECK(DoubleToF16(std::ldexp(1.0, -25)) == 0x0000);  // half of it: even is zero
  CHECK(DoubleToF16(std::ldexp(3.0, -26)) == 0x0001);
  CHECK(DoubleToF16(std::ldexp(3.0, -25)) == 0x0002);  // 1.5 ulps: even is 2
  CHECK(DoubleToF16(std::ldexp(1023.0, -24)) == 0x03FF);  // the largest subnormal
  CHECK(DoubleToF16(std::ldexp(2047.0, -25)) == 0x0400);  // rounds up to the smallest normal
  CHECK(DoubleToF16(1.0 + std::ldexp(1.0, -11)) == 0x3C00);  // tie: even
  CHECK(DoubleToF16(1.0 + std::ldexp(3.0, -11)) == 0x3C02);  // tie: even
  CHECK(DoubleToF16(-0.0) == 0x8000);
  CHECK(DoubleToF16(1e-300) == 0x0000);
  CHECK((DoubleToF16(std::nan("")) & 0x7E00) == 0x7E00);
  CHECK((DoubleToF16(-std::nan("")) >> 15) == 1);
  CHECK(DoubleToBF16(1.0) == 0x3F80);
  CHECK(DoubleToBF16(1.0 + std::ldexp(1.0, -8)) == 0x3F80);  // tie: even
  CHECK(DoubleToBF16(1.0 + std::ldexp(3.0, -8)) == 0x3F82);
  CHECK(DoubleToBF16(3.3895313892515355e38) == 0x7F7F);
  CHECK(DoubleToBF16(3.4e38) == 0x7F80);
  CHECK(DoubleToBF16(std::ldexp(1.0, -133)) == 0x0001);
  CHECK((DoubleToBF16(std::nan("")) & 0x7FC0) == 0x7FC0);
  CHECK(F16ToDouble(0x0001) == std::ldexp(1.0, -24));
  CHECK(F16ToDouble(0x7C00) == INFINITY);
  CHECK(BF16ToDouble(0xFF80) == -INFINITY);
  CHECK(std::isnan(BF16ToDouble(0x7FC1)));
}

TEST_CASE("every f16 and bf16 value survives widening, printing and parsing") {
  for (const char* type : {"f16", "bf16"}) {
    const bool half = std::string(type) == "f16";
    for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
      const uint16_t b = static_cast<uint16_t>(bits);
      const double wide = half ? F16ToDouble(b) : BF16ToDouble(b);
      Tensor t;
      t.element_type = half ? ElementType::kFloat16 : ElementType::kBFloat16;
      t.scalar = true;
      t.bytes = {static_cast<uint8_t>(b), static_cast<uint8_t>(b >> 8)};
      const std::string text = FormatTensor(t);
      Tensor back = Parse(text);
      const uint16_t parsed = Values<uint16_t>(back)[0];
      if (std::isnan(wide)) {
        CHECK_MESSAGE(std::isnan(half ? F16ToDouble(parsed) : BF16ToDouble(parsed)), text);
        continue;
      }
      CHECK_MESSAGE((half ? DoubleToF16(wide) : DoubleToBF16(wide)) == b, text);
      CHECK_MESSAGE(parsed == b, text);
    }
  }
  // Shortest digits, not the widened value's.
  CHECK(FormatTensor(Parse("f16=0.1")) == "f16=0.1");
  CHECK(FormatTensor(Parse("bf16=0.1")) == "bf16=0.1");
  CHECK(FormatTensor(Parse("2xf16=inf -inf")) == "2xf16=[inf -inf]");
  CHECK(FormatTensor(Parse("f16=6e-08")) == "f16=6e-08");  // the smallest subnormal
}

TEST_CASE("decimal literals round to f16 once, exactly") {
  // The tie 1 + 2^-11 itself goes to even; a literal just above it, which
  // strtod rounds onto the tie as a double, goes up.
  CHECK(Values<uint16_t>(Parse("f16=1.00048828125"))[0] == 0x3C00);
  CHECK(Values<uint16_t>(Parse("f16=1.000488281250000000000000001"))[0] == 0x3C01);
  CHECK(Values<uint16_t>(Parse("f16=1.000488281249999999999999999"))[0] == 0x3C00);
  CHECK(Values<uint16_t>(Parse("f16=1.00146484375"))[0] == 0x3C02);
  CHECK(Values<uint16_t>(Parse("bf16=1.00390625"))[0] == 0x3F80);
  CHECK(Values<uint16_t>(Parse("bf16=1.003906250000000000000000001"))[0] == 0x3F81);
}

// ---- printing ----

TEST_CASE("printing uses the input syntax") {
  CHECK(FormatTensor(Parse("i64=5050")) == "i64=5050");
  CHECK(FormatTensor(Parse("2x3xf32=1 2 3 4 5 6")) == "2x3xf32=[[1 2 3][4 5 6]]");
  CHECK(FormatTensor(Parse("3xi1=1 0 1")) == "3xi1=[1 0 1]");
  CHECK(FormatTensor(Parse("2xf32=0.1 -2.5e-10")) == "2xf32=[0.1 -2.5e-10]");
  CHECK(FormatTensor(Parse("2xf64=0.1 nan")) == "2xf64=[0.1 nan]");
  CHECK(FormatTensor(Parse("0x3xf32=")) == "0x3xf32=[]");
  CHECK(FormatTensor(Parse("2x0xf32=")) == "2x0xf32=[[][]]");
  CHECK(FormatTensor(Parse("2xui64=0 18446744073709551615")) == "2xui64=[0 18446744073709551615]");
  CHECK(FormatTensor(Parse("f32=16777216")) == "f32=16777216");
  CHECK(FormatTensor(Parse("f32=3.4028235e38")) == "f32=3.4028235e+38");
}

TEST_CASE("long tensors are elided along every dimension") {
  Tensor t = Parse("10xi32=0 1 2 3 4 5 6 7 8 9");
  CHECK(FormatTensor(t, {.max_elements = 5}) == "10xi32=[0 1 2 ... 7 8 9]");
  CHECK(FormatTensor(t, {.max_elements = 10}) == "10xi32=[0 1 2 3 4 5 6 7 8 9]");
  CHECK(FormatTensor(t, {.max_elements = 0}) == "10xi32=[0 1 2 3 4 5 6 7 8 9]");
  std::string text = "8x8xi8=";
  for (int i = 0; i < 64; ++i) text += StrCat(i, " ");
  CHECK(FormatTensor(Parse(text), {.max_elements = 16}) ==
        "8x8xi8=[[0 1 2 ... 5 6 7][8 9 10 ... 13 14 15][16 17 18 ... 21 22 23]...[40 41 42 ... 45 46 47]"
        "[48 49 50 ... 53 54 55][56 57 58 ... 61 62 63]]");
  CHECK(FormatTensor(Parse("1000x1000xf32=0.5")).size() < 400);
}

TEST_CASE("printed tensors parse back to the same bits") {
  std::mt19937_64 random(42);
  for (ElementType type : {ElementType::kFloat32, ElementType::kFloat64, ElementType::kInt64, ElementType::kInt8,
                           ElementType::kUint32, ElementType::kBFloat16, ElementType::kFloat16}) {
    Tensor t;
    t.element_type = type;
    t.shape = {3, 5, 7};
    t.bytes.resize(t.element_count() * ElementTypeByteSize(type));
    for (uint8_t& b : t.bytes) b = static_cast<uint8_t>(random());
    if (type == ElementType::kFloat32 || type == ElementType::kFloat64 || type == ElementType::kBFloat16 ||
        type == ElementType::kFloat16) {
      // Random bits include NaNs, whose payloads do not print; clear them.
      for (uint64_t i = 0; i < t.element_count(); ++i) {
        if (FormatElement(t, i).find("nan") != std::string::npos) {
          std::memset(t.bytes.data() + i * ElementTypeByteSize(type), 0, ElementTypeByteSize(type));
        }
      }
    }
    const std::string text = FormatTensor(t);
    Tensor back = Parse(text);
    CHECK_MESSAGE(back.bytes == t.bytes, text);
    CHECK(back.shape == t.shape);
  }
}

// ---- .npy ----

TEST_CASE("npy round trips every dtype, 0-d and empty arrays") {
  for (const char* text : {"2x3xf32=1 2 3 4 5 6", "3xf16=1 0.5 -inf", "2xf64=0.1 -0", "4xi1=1 0 0 1",
                           "2xi8=-128 127", "2xi16=-1 300", "2xi32=-1 70000", "2xi64=-1 5000000000",
                           "2xui8=0 255", "2xui16=1 65535", "2xui32=1 4000000000", "2xui64=1 18446744073709551615",
                           "0x4xf32=", "1x1x1x1x1x1x1x1xi32=7"}) {
    Tensor t = Parse(text);
    std::vector<uint8_t> file = EncodeNpy(t);
    CHECK((file[8] | (file[9] << 8)) % 64 == 54);  // data 64-byte aligned
    auto back = ParseNpy(file);
    REQUIRE_MESSAGE(back.ok(), back.status().ToString());
    CHECK_MESSAGE(back->element_type == t.element_type, text);
    CHECK(back->shape == t.shape);
    CHECK(back->bytes == t.bytes);
    CHECK_FALSE(back->scalar);
  }
  Tensor scalar = Parse("f64=2.5");
  std::vector<uint8_t> file = EncodeNpy(scalar);
  std::string header(file.begin() + 10, file.begin() + 10 + file[8]);
  CHECK(header.rfind("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 0) == 0);
  CHECK(header.back() == '\n');
  auto back = ParseNpy(file);
  REQUIRE(back.ok());
  CHECK(back->shape.empty());
  CHECK(Values<double>(*back) == std::vector<double>{2.5});
  Tensor one = Parse("5xi32=1");
  file = EncodeNpy(one);
  CHECK(std::string(file.begin() + 10, file.end()).find("'shape': (5,)") != std::string::npos);
}

TEST_CASE("bf16 is saved as <u2 and compares bit for bit with it") {
  Tensor t = Parse("2xbf16=1 -2");
  std::vector<uint8_t> file = EncodeNpy(t);
  CHECK(std::string(file.begin() + 10, file.end()).find("'descr': '<u2'") != std::string::npos);
  auto back = ParseNpy(file);
  REQUIRE(back.ok());
  CHECK(back->element_type == ElementType::kUint16);
  CHECK(CompareTensors(*back, t, {}).match);
}

std::vector<uint8_t> NpyWithHeader(int version, const std::string& dict, size_t data_bytes) {
  std::string header = dict;
  const size_t preamble = version == 1 ? 10 : 12;
  header.append(63 - (preamble + header.size()) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(version), 0};
  const uint32_t length = static_cast<uint32_t>(header.size());
  out.push_back(length & 0xFF);
  out.push_back((length >> 8) & 0xFF);
  if (version != 1) {
    out.push_back((length >> 16) & 0xFF);
    out.push_back(length >> 24);
  }
  out.insert(out.end(), header.begin(), header.end());
  out.resize(out.size() + data_bytes, 0);
  return out;
}

std::string NpyError(const std::vector<uint8_t>& bytes) {
  auto tensor = ParseNpy(bytes);
  REQUIRE_FALSE(tensor.ok());
  return tensor.status().message();
}

TEST_CASE("npy versions 2 and 3, dtype spellings") {
  for (int version : {2, 3}) {
    auto t = ParseNpy(NpyWithHeader(version, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", 16));
    REQUIRE_MESSAGE(t.ok(), t.status().ToString());
    CHECK(t->shape == std::vector<int64_t>{2, 2});
  }
  // Other key orders and quotes, '=' and '|' orders, a 1-d Fortran array.
  auto t = ParseNpy(NpyWithHeader(1, "{\"shape\": (3,), \"fortran_order\": True, \"descr\": \"=f4\"}", 12));
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  CHECK(t->element_type == ElementType::kFloat32);
  t = ParseNpy(NpyWithHeader(1, "{'descr': '>u1', 'fortran_order': False, 'shape': (3, 1), }", 3));
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  CHECK(t->element_type == ElementType::kUint8);
}

TEST_CASE("bad npy files are refused with a reason") {
  CHECK(NpyError({'n', 'o', 't'}) == "not a .npy file (it does not start with \\x93NUMPY)");
  CHECK(NpyError(NpyWithHeader(4, "{}", 0)) == "unsupported .npy format version 4.0 (supported: 1, 2 and 3)");
  CHECK(NpyError(NpyWithHeader(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8)) ==
        "big-endian .npy data ('>f4') is not supported; save it with a.astype(a.dtype.newbyteorder('<'))");
  CHECK(NpyError(NpyWithHeader(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24)) ==
        "Fortran-order .npy arrays are not supported; save it with np.ascontiguousarray(a)");
  CHECK(NpyError(NpyWithHeader(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16)) ==
        "unsupported .npy dtype '<c8' (supported: <f2 <f4 <f8 |b1 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8)");
  CHECK(NpyError(NpyWithHeader(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16)).find(
            "unsupported .npy dtype '|O'") == 0);
  CHECK(NpyError(NpyWithHeader(1, "{'descr': '<f4', 'shape': (2,), }", 8)).find(
            "malformed .npy header (needs 'descr', 'fortran_order' and 'shape')") == 0);
  CHECK(NpyError(NpyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 8)).find(
            "malformed .npy header at character 55: expected a dimension") == 0);
  CHECK(NpyError(NpyWithHeader(1, "[1, 2]", 8)).find("malformed .npy header at character 1: expected '{'") == 0);
  CHECK(NpyError(NpyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20)) ==
        "truncated .npy file: 2x3xf32 needs 24 data bytes, the file has 20");
  CHECK(NpyError(NpyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28)) ==
        "corrupt .npy file: 2x3xf32 needs 24 data bytes, the file has 28");
  CHECK(NpyError(NpyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
                               0)) == "the .npy shape 4294967296x4294967296xf32 overflows 64 bits");
  // Every truncation of a good file fails cleanly.
  std::vector<uint8_t> good = EncodeNpy(Parse("2x3xf32=1 2 3 4 5 6"));
  for (size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    CHECK_FALSE(ParseNpy(std::span(good.data(), n)).ok());
  }
}

TEST_CASE("damaged npy files and literals fail cleanly or parse, never crash") {
  std::mt19937 random(7);
  const std::vector<uint8_t> good = EncodeNpy(Parse("2x3xf32=1 2 3 4 5 6"));
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes = good;
    for (int flips = 1 + random() % 4; flips > 0; --flips) bytes[random() % bytes.size()] = random();
    auto tensor = ParseNpy(bytes);
    if (tensor.ok()) {
      CHECK(tensor->bytes.size() == tensor->element_count() * ElementTypeByteSize(tensor->element_type));
    }
  }
  const std::string alphabet = "0123456789x[], .-+=efinbtruai";
  for (int i = 0; i < 20000; ++i) {
    std::string text = "2x3xf32=";
    if (i % 3 == 0) text = "";
    for (int n = random() % 24; n > 0; --n) text += alphabet[random() % alphabet.size()];
    auto tensor = ParseTensor(text);
    if (tensor.ok()) {
      CHECK(tensor->bytes.size() == tensor->element_count() * ElementTypeByteSize(tensor->element_type));
    }
  }
}

TEST_CASE("files: @x.npy, SHAPExTYPE=@raw, missing files") {
  const std::string npy = TempPath("a.npy"), raw = TempPath("a.bin");
  REQUIRE(WriteNpyFile(npy, Parse("2x2xi16=1 2 3 4")).ok());
  Tensor t = Parse("@" + npy);
  CHECK(t.DescribeType() == "2x2xi16");
  CHECK_FALSE(t.scalar);
  CHECK(Values<int16_t>(Parse("2x2xi16=@" + npy)) == std::vector<int16_t>{1, 2, 3, 4});
  CHECK(ParseError("4xi16=@" + npy) == StrCat("'", npy, "' holds 2x2xi16, not 4xi16"));
  const uint8_t bytes[] = {1, 0, 2, 0, 3, 0};
  REQUIRE(WriteFile(raw, bytes).ok());
  CHECK(Values<int16_t>(Parse("3xi16=@" + raw)) == std::vector<int16_t>{1, 2, 3});
  CHECK(ParseError("2xi16=@" + raw) == StrCat("'", raw, "' has 6 bytes, but 2xi16 needs 4"));
  CHECK(ParseError("@" + raw) == StrCat("'", raw, "': not a .npy file (it does not start with \\x93NUMPY); raw ",
                                        "files need a shape and type: SHAPExTYPE=@", raw));
  CHECK(ParseError("@/no/such.npy") == "cannot open '/no/such.npy': No such file or directory");
  CHECK(ParseError("2xf32=@/no/such.bin") == "cannot open '/no/such.bin': No such file or directory");
  CHECK(ParseTensor("@/no/such.npy").status().code() == StatusCode::kNotFound);
  CHECK(WriteFile("/no/such/dir/x.npy", bytes).message() == "cannot write '/no/such/dir/x.npy': No such file or "
                                                             "directory");
  std::remove(npy.c_str());
  std::remove(raw.c_str());
}

// ---- comparison ----

TEST_CASE("comparison within tolerance, naming the first mismatch") {
  Tensor expected = Parse("2x3xf32=1 2 3 4 5 6");
  Comparison c = CompareTensors(expected, Parse("2x3xf32=1 2 3 4 5 6.000001"), {});
  CHECK(c.match);
  CHECK(c.element_count == 6);
  CHECK(c.max_abs_diff == doctest::Approx(9.5e-7).epsilon(0.01));
  c = CompareTensors(expected, Parse("2x3xf32=1 2 3 4 5.5 7"), {});
  CHECK_FALSE(c.match);
  CHECK(c.mismatch_count == 2);
  CHECK(c.message ==
        "element [1, 1]: expected 5, got 5.5 (|diff| 0.5 > atol 1e-06 + rtol 1e-05 * |expected|); 2 of 6 elements "
        "differ");
  CHECK(CompareTensors(expected, Parse("2x3xf32=1 2 3 4 5.5 7"), {.rtol = 0, .atol = 1}).match);
  CHECK(CompareTensors(expected, Parse("2x3xf32=1 2 3 4 5.5 6.6"), {.rtol = 0.1, .atol = 0}).match);
  // NaN matches NaN; infinities match themselves.
  CHECK(CompareTensors(Parse("3xf64=nan inf -inf"), Parse("3xf64=nan inf -inf"), {}).match);
  CHECK(CompareTensors(Parse("2xf64=1 nan"), Parse("2xf64=1 2"), {}).message ==
        "element [1]: expected nan, got 2 (NaN matches only NaN); 1 of 2 elements differ");
  CHECK(CompareTensors(Parse("f32=inf"), Parse("f32=3e38"), {}).message ==
        "expected inf, got 3e+38 (infinities match only themselves)");
  CHECK(CompareTensors(Parse("2xf16=1 2"), Parse("2xf16=1 2"), {}).match);
  CHECK_FALSE(CompareTensors(Parse("2xf16=1 2"), Parse("2xf16=1 2.002"), {}).match);
  CHECK(CompareTensors(Parse("2xf16=1 2"), Parse("2xf16=1 2.002"), {.rtol = 1e-3, .atol = 0}).match);
  CHECK_FALSE(CompareTensors(Parse("2xbf16=1 2"), Parse("2xbf16=1 2.02"), {}).match);
}

TEST_CASE("integers and booleans compare exactly") {
  CHECK(CompareTensors(Parse("3xi64=1 2 3"), Parse("3xi64=1 2 3"), {}).match);
  CHECK(CompareTensors(Parse("3xi64=1 2 3"), Parse("3xi64=1 2 4"), {.rtol = 1, .atol = 1}).message ==
        "element [2]: expected 3, got 4 (integers must be equal); 1 of 3 elements differ");
  CHECK(CompareTensors(Parse("i32=7"), Parse("i32=8"), {}).message == "expected 7, got 8 (integers must be equal)");
  CHECK(CompareTensors(Parse("2xui64=18446744073709551615 0"), Parse("2xui64=18446744073709551614 0"), {}).message ==
        "element [0]: expected 18446744073709551615, got 18446744073709551614 (integers must be equal); 1 of 2 "
        "elements differ");
  CHECK(CompareTensors(Parse("2xi1=1 0"), Parse("2xi1=true false"), {}).match);
}

TEST_CASE("shape, type and kind mismatches name both sides") {
  CHECK(CompareTensors(Parse("2x3xf32=0"), Parse("3x2xf32=0"), {}).message ==
        "expected a tensor 2x3xf32, got a tensor 3x2xf32");
  CHECK(CompareTensors(Parse("2xf32=0"), Parse("2xf64=0"), {}).message ==
        "expected a tensor 2xf32, got a tensor 2xf64");
  CHECK(CompareTensors(Parse("i64=5"), Parse("i32=5"), {}).message == "expected a scalar i64, got a scalar i32");
  CHECK(CompareTensors(Parse("f32=1"), Parse("1xf32=1"), {}).message == "expected a scalar f32, got a tensor 1xf32");
  CHECK(CompareTensors(Parse("1xf32=1"), Parse("f32=1"), {}).message == "expected a tensor 1xf32, got a scalar f32");
  // A 0-d tensor (from .npy) and a scalar of one type compare by value.
  Tensor zero_d = Parse("f32=1");
  zero_d.scalar = false;
  CHECK(CompareTensors(zero_d, Parse("f32=1"), {}).match);
  CHECK(CompareTensors(Parse("f32=1"), zero_d, {}).match);
  CHECK(FormatIndex(std::vector<int64_t>{2, 3, 4}, 23) == "[1, 2, 3]");
  CHECK(FormatIndex(std::vector<int64_t>{}, 0) == "[]");
}

// ---- buffer views and VM values ----

TEST_CASE("tensors to buffer views and back, on every driver") {
  std::vector<std::string> specs;
  for (const auto& [name, description] : drivers::DefaultRegistry().List()) specs.push_back(name);
  // Memory placed as on a discrete GPU: inputs go to device-local memory the
  // host cannot map, through a staging buffer.
  specs.push_back("vulkan?unified_memory=0");
  for (const std::string& name : specs) {
    CAPTURE(name);
    auto device = drivers::DefaultRegistry().CreateDevice(name);
    if (!device.ok() && device.status().code() == StatusCode::kUnavailable) continue;
    REQUIRE_MESSAGE(device.ok(), device.status().ToString());
    for (const char* text : {"2x3xf32=1 2 3 4 5 6", "4xi1=1 0 0 1", "0x2xf16=", "3xbf16=1 2 3"}) {
      Tensor t = Parse(text);
      auto view = CreateBufferView(**device, t);
      REQUIRE_MESSAGE(view.ok(), view.status().ToString());
      CHECK((*view)->DescribeType() == t.DescribeType());
      // Device-local; mappable exactly where that memory is host-visible.
      const hal::Buffer& placed = *(*view)->buffer();
      CHECK((placed.memory_types() & hal::kMemoryDeviceLocal));
      CHECK(bool(placed.usage() & hal::kUsageMapping) == bool(placed.memory_types() & hal::kMemoryHostVisible));
      if (name == "vulkan?unified_memory=0") CHECK(!(placed.memory_types() & hal::kMemoryHostVisible));
      auto back = ReadBufferView(**device, **view);
      REQUIRE_MESSAGE(back.ok(), back.status().ToString());
      CHECK(back->bytes == t.bytes);
      CHECK(back->shape == t.shape);
      // As a VM argument and result.
      auto value = TensorToValue(t, 'r', **device);
      REQUIRE(value.ok());
      auto result = TensorFromValue(*value, **device);
      REQUIRE(result.ok());
      CHECK(result->bytes == t.bytes);
    }
    // A view of a buffer the host cannot map is read through a copy.
    hal::BufferParams params;
    params.memory_types = hal::kMemoryDeviceLocal;
    params.usage = hal::kUsageTransferSource | hal::kUsageDispatchStorage;
    auto buffer = (*device)->allocator()->Allocate(params, 16);
    REQUIRE(buffer.ok());
    const int64_t shape[] = {2};
    auto view = hal::BufferView::Create(*buffer, 8, ElementType::kInt32, shape);
    REQUIRE(view.ok());
    auto staged = ReadBufferView(**device, **view);
    REQUIRE_MESSAGE(staged.ok(), staged.status().ToString());
    CHECK(staged->DescribeType() == "2xi32");
  }
}

TEST_CASE("VM scalars: types must match the signature") {
  auto device = drivers::DefaultRegistry().CreateDevice("cpu-sync");
  REQUIRE(device.ok());
  hal::Device& cpu = **device;
  auto value = TensorToValue(Parse("i64=-5"), 'I', cpu);
  REQUIRE(value.ok());
  CHECK(value->i64() == -5);
  CHECK(TensorToValue(Parse("i1=1"), 'i', cpu)->i32() == 1);
  CHECK(TensorToValue(Parse("f32=2.5"), 'f', cpu)->f32() == 2.5f);
  CHECK(TensorToValue(Parse("f64=2.5"), 'F', cpu)->f64() == 2.5);
  CHECK(TensorToValue(Parse("f32=2.5"), 'I', cpu).status().message() == "expected i64, got f32");
  CHECK(TensorToValue(Parse("i16=2"), 'i', cpu).status().message() == "expected i32, got i16");
  CHECK(TensorToValue(Parse("2xi64=2"), 'I', cpu).status().message() == "expected i64, got a tensor 2xi64");
  CHECK(TensorToValue(Parse("f32=2.5"), 'r', cpu).status().message() ==
        "expected a tensor, got the scalar f32=2.5");
  // A 0-d tensor (from .npy) may stand for a scalar.
  Tensor zero_d = Parse("i32=3");
  zero_d.scalar = false;
  CHECK(TensorToValue(zero_d, 'i', cpu)->i32() == 3);
  auto result = TensorFromValue(vm::Value::F64(0.1), **device);
  REQUIRE(result.ok());
  CHECK(FormatTensor(*result) == "f64=0.1");
  CHECK(TensorFromValue(vm::Value::FromRef(nullptr), **device).status().message() ==
        "not a tensor or scalar: ref=null");
}

}  // namespace
}  // namespace strata::tools
