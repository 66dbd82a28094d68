#include "tools/common/tensor_text.h"

#include <cerrno>
#include <cfenv>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tools/common/file_io.h"
#include "tools/common/numpy_io.h"
#include "vm/base/float16.h"

namespace strata::tools {
namespace {

// Parses a float literal to the nearest value of `type` (f16, bf16, f32, f64),
// returned as a double. False if it is not a number; *overflow when a finite
// literal is too large for the type.
bool ParseFloatLiteral(std::string_view token, ElementType type, double* out, bool* overflow) {
  *overflow = false;
  if (token.empty() || std::isspace(static_cast<unsigned char>(token[0]))) return false;
  std::string text(token);
  char* end = nullptr;
  errno = 0;
  if (type == ElementType::kFloat32) {
    float f = std::strtof(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return false;
    *overflow = errno == ERANGE && std::isinf(f);
    *out = f;
    return true;
  }
  double d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return false;
  *overflow = errno == ERANGE && std::isinf(d);
  if (type == ElementType::kFloat64) {
    *out = d;
    return true;
  }
  const bool half = type == ElementType::kFloat16;
  const int exp_bits = half ? kF16Exp : kBF16Exp, mant_bits = half ? kF16Mant : kBF16Mant;
  bool tie = false;
  uint16_t bits = NarrowFloat(d, exp_bits, mant_bits, &tie);
  if (tie) {
    // strtod rounded the literal to a double that lies exactly halfway; the
    // literal itself may not. Read it rounded down and up: if they differ it
    // was inexact, and the neighbour on its side breaks the tie correctly.
    const int mode = std::fegetround();
    std::fesetround(FE_DOWNWARD);
    double down = std::strtod(text.c_str(), nullptr);
    std::fesetround(FE_UPWARD);
    double up = std::strtod(text.c_str(), nullptr);
    std::fesetround(mode);
    if (down != up) bits = NarrowFloat(d == down ? up : down, exp_bits, mant_bits, &tie);
  }
  *out = WidenFloat(bits, exp_bits, mant_bits);
  if (std::isinf(*out) && !std::isinf(d)) *overflow = true;
  return true;
}

enum class IntegerLiteral { kOk, kBad, kOverflow };

// Sign and magnitude of a decimal or 0x-hex integer literal.
IntegerLiteral ParseIntegerLiteral(std::string_view token, bool* negative, uint64_t* magnitude) {
  *negative = false;
  if (!token.empty() && (token[0] == '-' || token[0] == '+')) {
    *negative = token[0] == '-';
    token.remove_prefix(1);
  }
  int base = 10;
  if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X')) {
    base = 16;
    token.remove_prefix(2);
  }
  if (token.empty() || token[0] == '-' || token[0] == '+') return IntegerLiteral::kBad;
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), *magnitude, base);
  if (ptr != token.data() + token.size()) return IntegerLiteral::kBad;
  if (ec == std::errc::result_out_of_range) return IntegerLiteral::kOverflow;
  return ec == std::errc() ? IntegerLiteral::kOk : IntegerLiteral::kBad;
}

// Parses one element of `type` from `token` into `out`.
Status ParseElement(std::string_view token, ElementType type, uint8_t* out) {
  const char* name = ElementTypeName(type);
  auto bad = [&](const char* why) {
    return InvalidArgumentError("cannot parse '", token, "' as ", name, why);
  };
  if (IsFloat(type)) {
    double v;
    bool overflow;
    if (!ParseFloatLiteral(token, type, &v, &overflow)) return bad("");
    if (overflow) return bad(StrCat(" (out of range for ", name, ")").c_str());
    switch (type) {
      case ElementType::kFloat16: Store<uint16_t>(out, DoubleToF16(v)); break;
      case ElementType::kBFloat16: Store<uint16_t>(out, DoubleToBF16(v)); break;
      case ElementType::kFloat32: Store<float>(out, static_cast<float>(v)); break;
      default: Store<double>(out, v); break;
    }
    return OkStatus();
  }
  if (type == ElementType::kBool8) {
    if (token == "true" || token == "1") {
      *out = 1;
    } else if (token == "false" || token == "0") {
      *out = 0;
    } else {
      return bad(" (expected 0, 1, true or false)");
    }
    return OkStatus();
  }
  bool negative;
  uint64_t magnitude;
  const IntegerLiteral literal = ParseIntegerLiteral(token, &negative, &magnitude);
  const std::string range = StrCat(" (out of range for ", name, ")");
  if (literal == IntegerLiteral::kBad) return bad("");
  if (literal == IntegerLiteral::kOverflow) return bad(range.c_str());
  const size_t size = ElementTypeByteSize(type);
  if (KindOf(type) == Kind::kUnsigned) {
    const uint64_t max = size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1;
    if ((negative && magnitude != 0) || magnitude > max) return bad(range.c_str());
  } else {
    const uint64_t max = (uint64_t{1} << (8 * size - 1)) - 1;
    if (magnitude > max + (negative ? 1 : 0)) return bad(range.c_str());
    if (negative) magnitude = ~magnitude + 1;  // two's complement
  }
  std::memcpy(out, &magnitude, size);  // the low bytes, little-endian
  return OkStatus();
}

// The shortest decimal that reads back (through ParseFloatLiteral) to `v`;
// integral values below 1e16 print without an exponent.
std::string FormatFloat(double v, ElementType type) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  if (v == std::trunc(v) && std::fabs(v) < 1e16) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    double back;
    bool overflow;
    if (ParseFloatLiteral(buf, type, &back, &overflow) && back == v) break;
  }
  return buf;
}

// "2x3xf32" -> shape and type.
Status ParseShapeAndType(std::string_view text, Tensor* tensor) {
  size_t last_x = text.rfind('x');
  std::string_view type_name = last_x == std::string_view::npos ? text : text.substr(last_x + 1);
  STRATA_ASSIGN_OR_RETURN(tensor->element_type, ParseElementType(type_name));
  if (last_x == std::string_view::npos) return OkStatus();
  std::string_view dims = text.substr(0, last_x + 1);  // "2x3x"
  while (!dims.empty()) {
    size_t x = dims.find('x');
    std::string_view dim = dims.substr(0, x);
    uint64_t value = 0;
    auto [ptr, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
    if (dim.empty() || ec != std::errc() || ptr != dim.data() + dim.size() ||
        value > static_cast<uint64_t>(INT64_MAX)) {
      return InvalidArgumentError("bad dimension '", dim, "' in '", text,
                                  "' (dimensions are non-negative integers, as in 2x3xf32)");
    }
    tensor->shape.push_back(static_cast<int64_t>(value));
    dims.remove_prefix(x + 1);
  }
  uint64_t bytes;
  if (!ShapeByteSize(tensor->shape, tensor->element_type, &bytes)) {
    return InvalidArgumentError("the byte size of ", text, " overflows 64 bits");
  }
  return OkStatus();
}

// What one pair of brackets (or the whole literal, at level 0) held.
struct Group {
  size_t level;     // how many brackets enclose its contents (0: none)
  size_t position;  // of its '[' in the literal
  uint64_t values = 0;
  uint64_t groups = 0;
};

// Checks that the brackets of a literal fit `shape`: none at all; one pair
// around everything; full nesting ([[1 2 3][4 5 6]]); or full nesting less
// the outer pair ([1 2 3][4 5 6], IREE's form).
Status CheckBrackets(const std::vector<Group>& groups, std::span<const int64_t> shape, std::string_view type) {
  const Group& root = groups.back();  // closed last
  if (groups.size() == 1) return OkStatus();
  size_t value_level = 0;
  bool any_values = false;
  for (const Group& g : groups) {
    if (g.values && g.groups) {
      return InvalidArgumentError("the brackets at character ", g.position + 1,
                                  " hold both values and brackets; for ", type,
                                  " write e.g. [[1 2 3][4 5 6]] or 1 2 3 4 5 6");
    }
    if (!g.values) continue;
    if (any_values && g.level != value_level) {
      return InvalidArgumentError("values are nested at different depths (", value_level, " and ", g.level,
                                  " brackets); the brackets must match the shape ", type);
    }
    any_values = true;
    value_level = g.level;
  }
  if (!any_values) return OkStatus();  // an empty tensor: the count check decides
  if (value_level == 1 && root.groups == 1 && root.values == 0) return OkStatus();  // [flat]
  // Level `value_level` holds the last dimension; `offset` is 1 when an outer
  // pair encloses the first dimension's groups.
  const int64_t offset = static_cast<int64_t>(value_level) - static_cast<int64_t>(shape.size()) + 1;
  if (offset < 0 || offset > 1 || (offset == 1 && root.groups != 1)) {
    return InvalidArgumentError("the values are nested ", value_level, " bracket", value_level == 1 ? "" : "s",
                                " deep, which does not match the shape ", type, " (rank ", shape.size(),
                                "): write e.g. [[1 2 3][4 5 6]] for 2x3, or no brackets");
  }
  for (size_t level = static_cast<size_t>(offset); level <= value_level; ++level) {  // outermost first
    for (const Group& g : groups) {
      if (g.level != level) continue;
      const size_t dim = level - static_cast<size_t>(offset);
      const uint64_t items = g.values + g.groups;
      if (items == static_cast<uint64_t>(shape[dim])) continue;
      std::string where = level == 0 ? std::string("at the top level")
                                     : StrCat("in the brackets at character ", g.position + 1);
      return InvalidArgumentError(where, " there are ", items, level == value_level ? " value" : " group",
                                  items == 1 ? "" : "s", ", expected ", shape[dim], " (dimension ", dim, " of ",
                                  type, ")");
    }
  }
  return OkStatus();
}

Status ParseValues(std::string_view text, Tensor* tensor) {
  const std::string type = tensor->DescribeType();
  std::vector<std::string_view> tokens;
  std::vector<Group> open = {Group{0, 0}};
  std::vector<Group> closed;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',') {
      ++i;
    } else if (c == '[') {
      ++open.back().groups;
      open.push_back(Group{open.size(), i});
      ++i;
    } else if (c == ']') {
      if (open.size() == 1) return InvalidArgumentError("unmatched ']' at character ", i + 1);
      closed.push_back(open.back());
      open.pop_back();
      ++i;
    } else {
      size_t start = i;
      while (i < text.size() && !std::strchr(" \t\n\r,[]", text[i])) ++i;
      tokens.push_back(text.substr(start, i - start));
      ++open.back().values;
    }
  }
  if (open.size() > 1) return InvalidArgumentError("unclosed '[' at character ", open.back().position + 1);
  closed.push_back(open.back());
  const bool brackets = closed.size() > 1;

  const uint64_t count = tensor->element_count();
  const size_t size = ElementTypeByteSize(tensor->element_type);
  const bool splat = !brackets && tokens.size() == 1 && count != 1;
  if (tensor->scalar && tokens.size() != 1) {
    return InvalidArgumentError("expected one ", type, " value, got ", tokens.size());
  }
  if (!splat && tokens.size() != count) {
    return InvalidArgumentError(type, " needs ", count, " value", count == 1 ? "" : "s",
                                count > 1 ? " (or 1 to fill it)" : "", ", got ", tokens.size());
  }
  STRATA_RETURN_IF_ERROR(CheckBrackets(closed, tensor->shape, type));
  STRATA_RETURN_IF_ERROR(ResizeBytes(tensor, count * size));
  for (size_t i = 0; i < tokens.size() && count > 0; ++i) {
    Status status = ParseElement(tokens[i], tensor->element_type, tensor->bytes.data() + i * size);
    if (!status.ok()) {
      if (!tensor->scalar) status.Annotate("value ", i, " of ", type, ": ");
      return status;
    }
  }
  if (splat && count > 0) {  // double the filled prefix until it is full
    for (size_t filled = size; filled < tensor->bytes.size(); filled *= 2) {
      std::memcpy(tensor->bytes.data() + filled, tensor->bytes.data(),
                  std::min(filled, tensor->bytes.size() - filled));
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<Tensor> ParseTensor(std::string_view text) {
  if (!text.empty() && text[0] == '@') {
    const std::string path(text.substr(1));
    STRATA_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFile(path));
    auto tensor = ParseNpy(bytes);
    if (tensor.ok()) return tensor;
    Status status = tensor.status();
    status.Annotate("'", path, "': ");
    if (!IsNpy(bytes)) {
      return InvalidArgumentError(status.message(), "; raw files need a shape and type: SHAPExTYPE=@", path);
    }
    return status;
  }
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return InvalidArgumentError("expected TYPE=VALUE, SHAPExTYPE=VALUES or @FILE.npy (e.g. i32=5, ",
                                "2x3xf32=1 2 3 4 5 6), got '", text, "'");
  }
  Tensor tensor;
  STRATA_RETURN_IF_ERROR(ParseShapeAndType(text.substr(0, eq), &tensor));
  tensor.scalar = tensor.shape.empty();
  std::string_view values = text.substr(eq + 1);
  if (values.empty() || values[0] != '@') {
    STRATA_RETURN_IF_ERROR(ParseValues(values, &tensor));
    return tensor;
  }
  // SHAPExTYPE=@FILE: raw bytes, or an .npy file that must match.
  const std::string path(values.substr(1));
  STRATA_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFile(path));
  if (IsNpy(bytes)) {
    auto npy = ParseNpy(bytes);
    if (!npy.ok()) {
      Status status = npy.status();
      return status.Annotate("'", path, "': ");
    }
    if (npy->element_type != tensor.element_type || npy->shape != tensor.shape) {
      return InvalidArgumentError("'", path, "' holds ", npy->DescribeType(), ", not ", tensor.DescribeType());
    }
    npy->scalar = tensor.scalar;
    return std::move(npy).value();
  }
  const uint64_t expected = tensor.element_count() * ElementTypeByteSize(tensor.element_type);
  if (bytes.size() != expected) {
    return InvalidArgumentError("'", path, "' has ", bytes.size(), " bytes, but ", tensor.DescribeType(),
                                " needs ", expected);
  }
  tensor.bytes = std::move(bytes);
  return tensor;
}

std::string FormatElement(const Tensor& tensor, uint64_t index) {
  const ElementType type = tensor.element_type;
  const uint8_t* p = tensor.bytes.data() + index * ElementTypeByteSize(type);
  switch (KindOf(type)) {
    case Kind::kFloat:
    case Kind::kBFloat: return FormatFloat(LoadFloat(type, p), type);
    case Kind::kSigned: return StrCat(LoadSigned(type, p));
    case Kind::kUnsigned: return StrCat(LoadUnsigned(type, p));
    case Kind::kBool: return *p ? "1" : "0";
  }
  return "?";
}

namespace {

constexpr int64_t kEdgeItems = 3;

void FormatDim(const Tensor& tensor, size_t dim, uint64_t offset, bool elide, std::string* out) {
  const int64_t n = tensor.shape[dim];
  uint64_t stride = 1;
  for (size_t d = dim + 1; d < tensor.shape.size(); ++d) stride *= static_cast<uint64_t>(tensor.shape[d]);
  const bool last = dim + 1 == tensor.shape.size();
  *out += '[';
  for (int64_t i = 0; i < n; ++i) {
    if (elide && n > 2 * kEdgeItems && i == kEdgeItems) {
      *out += last ? " ..." : "...";
      i = n - kEdgeItems;
    }
    if (last && i > 0) *out += ' ';
    if (last) {
      *out += FormatElement(tensor, offset + static_cast<uint64_t>(i));
    } else {
      FormatDim(tensor, dim + 1, offset + static_cast<uint64_t>(i) * stride, elide, out);
    }
  }
  *out += ']';
}

}  // namespace

std::string FormatTensor(const Tensor& tensor, const PrintOptions& options) {
  std::string out = tensor.DescribeType() + "=";
  if (tensor.shape.empty()) return out + FormatElement(tensor, 0);
  const bool elide = options.max_elements != 0 && tensor.element_count() > options.max_elements;
  FormatDim(tensor, 0, 0, elide, &out);
  return out;
}

}  // namespace strata::tools
