#include "tools/common/tensor_io.h"

#include <bit>
#include <cerrno>
#include <cfenv>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/stat.h>
#include <unistd.h>

#include "hal/semaphore.h"

namespace strata::tools {


// Tensors, buffers and .npy files are little-endian; the host copies bytes.
static_assert(std::endian::native == std::endian::little, "tensor_io assumes a little-endian host");

namespace {

using hal::ElementType;

// The byte-order character and code of a .npy dtype: "<f4", "|b1".
std::string NpyDescr(const ElementTypeInfo& info) {
  return StrCat(ElementTypeByteSize(info.type) == 1 ? "|" : "<", info.numpy);
}

std::string ElementTypeNames() {
  std::string names;
  for (const auto& info : kElementTypes) names += StrCat(names.empty() ? "" : ", ", info.name);
  return names;
}

// The kind byte of the (kind << 8) | bits encoding.
enum class Kind { kSigned = 1, kUnsigned = 2, kFloat = 3, kBFloat = 4, kBool = 5 };
Kind KindOf(ElementType type) { return static_cast<Kind>(static_cast<uint32_t>(type) >> 8); }
bool IsFloat(ElementType type) { return KindOf(type) == Kind::kFloat || KindOf(type) == Kind::kBFloat; }
size_t ByteSize(ElementType type) { return ElementTypeByteSize(type); }

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void Store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

double LoadFloat(ElementType type, const uint8_t* p) {
  switch (type) {
    case ElementType::kFloat16: return F16ToDouble(Load<uint16_t>(p));
    case ElementType::kBFloat16: return BF16ToDouble(Load<uint16_t>(p));
    case ElementType::kFloat32: return Load<float>(p);
    default: return Load<double>(p);
  }
}
int64_t LoadSigned(ElementType type, const uint8_t* p) {
  switch (ByteSize(type)) {
    case 1: return Load<int8_t>(p);
    case 2: return Load<int16_t>(p);
    case 4: return Load<int32_t>(p);
    default: return Load<int64_t>(p);
  }
}
uint64_t LoadUnsigned(ElementType type, const uint8_t* p) {
  switch (ByteSize(type)) {
    case 1: return Load<uint8_t>(p);
    case 2: return Load<uint16_t>(p);
    case 4: return Load<uint32_t>(p);
    default: return Load<uint64_t>(p);
  }
}


// ---- literals ----

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
  const size_t size = ByteSize(type);
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

std::string FormatDims(std::span<const int64_t> shape, const char* separator) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) out += StrCat(i ? separator : "", shape[i]);
  return out;
}

// The byte size of `shape` of `type`, or false on overflow.
bool ShapeByteSize(std::span<const int64_t> shape, ElementType type, uint64_t* bytes) {
  *bytes = ByteSize(type);
  for (int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(*bytes, static_cast<uint64_t>(dim), bytes)) return false;
  }
  return true;
}

// Bytes of physical memory, the most one tensor could ever take here.
uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
                                    : ~uint64_t{0};
}

Status ResizeBytes(Tensor* tensor, uint64_t bytes) {
  // Refused up front rather than left to the allocator, which may abort
  // (under sanitizers) or overcommit instead of failing.
  if (const uint64_t memory = PhysicalMemoryBytes(); bytes > memory) {
    return ResourceExhaustedError("a ", tensor->DescribeType(), " tensor needs ", bytes,
                                  " bytes, more than this machine's ", memory, " bytes of memory");
  }
  try {
    tensor->bytes.resize(bytes);
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError("a ", tensor->DescribeType(), " tensor needs ", bytes,
                                  " bytes of host memory, which cannot be allocated");
  } catch (const std::length_error&) {
    return ResourceExhaustedError("a ", tensor->DescribeType(), " tensor needs ", bytes,
                                  " bytes of host memory, which cannot be allocated");
  }
  return OkStatus();
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
  const size_t size = ByteSize(tensor->element_type);
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
      if (!tensor->scalar) status.Annotate(StrCat("value ", i, " of ", type, ": "));
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

// ---- .npy ----

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicSize = 6;

// Just enough of Python's literal syntax for an .npy header dictionary.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  struct Entry {
    std::string key;
    std::string string_value;
    bool bool_value = false;
    std::vector<int64_t> tuple;
    enum { kString, kBool, kTuple } kind = kString;
  };

  Status Parse(std::vector<Entry>* entries) {
    Skip();
    if (!Eat('{')) return Bad("expected '{'");
    while (true) {
      Skip();
      if (Eat('}')) break;
      Entry entry;
      STRATA_RETURN_IF_ERROR(String(&entry.key));
      Skip();
      if (!Eat(':')) return Bad("expected ':'");
      Skip();
      if (Peek() == '\'' || Peek() == '"') {
        STRATA_RETURN_IF_ERROR(String(&entry.string_value));
      } else if (Word("True") || Word("False")) {
        entry.kind = Entry::kBool;
        entry.bool_value = text_.substr(pos_ - 4, 4) == "True";
      } else if (Eat('(')) {
        entry.kind = Entry::kTuple;
        while (true) {
          Skip();
          if (Eat(')')) break;
          size_t start = pos_;
          while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
          int64_t dim = 0;
          auto [ptr, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, dim);
          if (start == pos_ || ec != std::errc()) return Bad("expected a dimension");
          entry.tuple.push_back(dim);
          Skip();
          if (Eat(')')) break;
          if (!Eat(',')) return Bad("expected ',' or ')'");
        }
      } else {
        return Bad("expected a string, True, False or a tuple");
      }
      entries->push_back(std::move(entry));
      Skip();
      if (Eat('}')) break;
      if (!Eat(',')) return Bad("expected ',' or '}'");
    }
    return OkStatus();
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  bool Word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  void Skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  Status String(std::string* out) {
    char quote = Peek();
    if (quote != '\'' && quote != '"') return Bad("expected a quoted string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return Bad("unterminated string");
    *out = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return OkStatus();
  }
  Status Bad(const char* what) const {
    return InvalidArgumentError("malformed .npy header at character ", pos_ + 1, ": ", what, " in \"",
                                text_, "\"");
  }

  std::string_view text_;
  size_t pos_ = 0;
};

StatusOr<ElementType> ElementTypeFromDescr(const std::string& descr) {
  auto unsupported = [&]() {
    std::string supported;
    for (const ElementTypeInfo& info : kElementTypes) {
      // bf16 travels as uint16: its code reads as ui16.
      if (info.type != ElementType::kBFloat16) supported += StrCat(supported.empty() ? "" : " ", NpyDescr(info));
    }
    return InvalidArgumentError("unsupported .npy dtype '", descr, "' (supported: ", supported, ")");
  };
  if (descr.size() != 3) return unsupported();
  const char order = descr[0];
  const std::string code = descr.substr(1);
  for (const ElementTypeInfo& info : kElementTypes) {
    // bf16 travels as uint16: its code reads as ui16.
    if (code != info.numpy || info.type == ElementType::kBFloat16) continue;
    const bool one_byte = ElementTypeByteSize(info.type) == 1;
    if (order == '>' && !one_byte) {
      return InvalidArgumentError("big-endian .npy data ('", descr, "') is not supported; save it with ",
                                  "a.astype(a.dtype.newbyteorder('<'))");
    }
    if (order != '<' && order != '|' && order != '=' && !(order == '>' && one_byte)) return unsupported();
    return info.type;
  }
  return unsupported();
}

}  // namespace

// ---- Tensor ----

uint64_t Tensor::element_count() const {
  uint64_t count = 1;
  for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
  return count;
}

std::string Tensor::DescribeType() const {
  const char* name = ElementTypeName(element_type);
  return FormatDims(shape, "x") + (shape.empty() ? "" : "x") + (name ? name : "?");
}

StatusOr<hal::ElementType> ParseElementType(std::string_view name) {
  if (auto type = ElementTypeFromName(name)) return *type;
  return InvalidArgumentError("unknown element type '", name, "' (expected one of ", ElementTypeNames(), ")");
}

// ---- parsing ----

StatusOr<Tensor> ParseTensor(std::string_view text) {
  if (!text.empty() && text[0] == '@') {
    const std::string path(text.substr(1));
    STRATA_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFile(path));
    auto tensor = ParseNpy(bytes);
    if (tensor.ok()) return tensor;
    Status status = tensor.status();
    status.Annotate(StrCat("'", path, "': "));
    if (bytes.size() < kNpyMagicSize || std::memcmp(bytes.data(), kNpyMagic, kNpyMagicSize) != 0) {
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
  if (bytes.size() >= kNpyMagicSize && std::memcmp(bytes.data(), kNpyMagic, kNpyMagicSize) == 0) {
    auto npy = ParseNpy(bytes);
    if (!npy.ok()) {
      Status status = npy.status();
      return status.Annotate(StrCat("'", path, "': "));
    }
    if (npy->element_type != tensor.element_type || npy->shape != tensor.shape) {
      return InvalidArgumentError("'", path, "' holds ", npy->DescribeType(), ", not ", tensor.DescribeType());
    }
    npy->scalar = tensor.scalar;
    return std::move(npy).value();
  }
  const uint64_t expected = tensor.element_count() * ByteSize(tensor.element_type);
  if (bytes.size() != expected) {
    return InvalidArgumentError("'", path, "' has ", bytes.size(), " bytes, but ", tensor.DescribeType(),
                                " needs ", expected);
  }
  tensor.bytes = std::move(bytes);
  return tensor;
}

// ---- printing ----

std::string FormatElement(const Tensor& tensor, uint64_t index) {
  const ElementType type = tensor.element_type;
  const uint8_t* p = tensor.bytes.data() + index * ByteSize(type);
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

std::string FormatIndex(std::span<const int64_t> shape, uint64_t index) {
  std::vector<int64_t> indices(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    const uint64_t dim = static_cast<uint64_t>(shape[d]);
    indices[d] = dim ? static_cast<int64_t>(index % dim) : 0;
    index = dim ? index / dim : 0;
  }
  return "[" + FormatDims(indices, ", ") + "]";
}

// ---- .npy ----

StatusOr<Tensor> ParseNpy(std::span<const uint8_t> bytes) {
  if (bytes.size() < kNpyMagicSize || std::memcmp(bytes.data(), kNpyMagic, kNpyMagicSize) != 0) {
    return InvalidArgumentError("not a .npy file (it does not start with \\x93NUMPY)");
  }
  if (bytes.size() < 10) return DataLossError("truncated .npy file: ", bytes.size(), " bytes");
  const uint8_t major = bytes[6], minor = bytes[7];
  size_t header_start;
  uint64_t header_length;
  if (major == 1) {
    header_start = 10;
    header_length = Load<uint16_t>(bytes.data() + 8);
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return DataLossError("truncated .npy file: ", bytes.size(), " bytes");
    header_start = 12;
    header_length = Load<uint32_t>(bytes.data() + 8);
  } else {
    return InvalidArgumentError("unsupported .npy format version ", int(major), ".", int(minor),
                                " (supported: 1, 2 and 3)");
  }
  if (header_length > bytes.size() - header_start) {
    return DataLossError("truncated .npy file: the header needs ", header_length, " bytes, the file has ",
                         bytes.size() - header_start, " after the preamble");
  }
  std::string_view header(reinterpret_cast<const char*>(bytes.data() + header_start), header_length);
  std::vector<HeaderParser::Entry> entries;
  STRATA_RETURN_IF_ERROR(HeaderParser(header).Parse(&entries));
  const HeaderParser::Entry *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto& entry : entries) {
    if (entry.key == "descr" && entry.kind == HeaderParser::Entry::kString) descr = &entry;
    if (entry.key == "fortran_order" && entry.kind == HeaderParser::Entry::kBool) fortran = &entry;
    if (entry.key == "shape" && entry.kind == HeaderParser::Entry::kTuple) shape = &entry;
  }
  if (!descr || !fortran || !shape) {
    return InvalidArgumentError("malformed .npy header (needs 'descr', 'fortran_order' and 'shape'): \"",
                                header, "\"");
  }
  Tensor tensor;
  STRATA_ASSIGN_OR_RETURN(tensor.element_type, ElementTypeFromDescr(descr->string_value));
  tensor.shape = shape->tuple;
  // One dimension or none is laid out alike in either order.
  size_t long_dims = 0;
  for (int64_t dim : tensor.shape) long_dims += dim > 1;
  if (fortran->bool_value && long_dims > 1) {
    return InvalidArgumentError("Fortran-order .npy arrays are not supported; save it with ",
                                "np.ascontiguousarray(a)");
  }
  uint64_t data_bytes;
  if (!ShapeByteSize(tensor.shape, tensor.element_type, &data_bytes)) {
    return InvalidArgumentError("the .npy shape ", tensor.DescribeType(), " overflows 64 bits");
  }
  const uint64_t available = bytes.size() - header_start - header_length;
  if (available != data_bytes) {
    return DataLossError(available < data_bytes ? "truncated .npy file: " : "corrupt .npy file: ",
                         tensor.DescribeType(), " needs ", data_bytes, " data bytes, the file has ", available);
  }
  const uint8_t* data = bytes.data() + header_start + header_length;
  tensor.bytes.assign(data, data + data_bytes);
  return tensor;
}

StatusOr<Tensor> ReadNpyFile(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFile(path));
  auto tensor = ParseNpy(bytes);
  if (!tensor.ok()) {
    Status status = tensor.status();
    return status.Annotate(StrCat("'", path, "': "));
  }
  return tensor;
}

std::vector<uint8_t> EncodeNpy(const Tensor& tensor) {
  std::string shape = "(" + FormatDims(tensor.shape, ", ") + (tensor.shape.size() == 1 ? ",)" : ")");
  std::string header = StrCat("{'descr': '", NpyDescr(*FindElementType(tensor.element_type)),
                              "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad with spaces and a newline so the data starts 64-byte aligned.
  const size_t preamble = kNpyMagicSize + 4;
  header.append(63 - (preamble + header.size()) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kNpyMagic, kNpyMagic + kNpyMagicSize);
  out.push_back(1);
  out.push_back(0);
  const uint16_t length = static_cast<uint16_t>(header.size());
  out.push_back(static_cast<uint8_t>(length & 0xFF));
  out.push_back(static_cast<uint8_t>(length >> 8));
  out.insert(out.end(), header.begin(), header.end());
  const size_t data_start = out.size();
  out.insert(out.end(), tensor.bytes.begin(), tensor.bytes.end());
  if (tensor.element_type == ElementType::kBool8) {
    for (size_t i = data_start; i < out.size(); ++i) out[i] = out[i] != 0;
  }
  return out;
}

Status WriteNpyFile(const std::string& path, const Tensor& tensor) {
  return WriteFile(path, EncodeNpy(tensor));
}

// ---- files ----

StatusOr<std::vector<uint8_t>> ReadFile(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) {
    const int error = errno;
    if (error == ENOENT) return NotFoundError("cannot open '", path, "': ", std::strerror(error));
    return InvalidArgumentError("cannot open '", path, "': ", std::strerror(error));
  }
  // The size is checked before anything is read: a file larger than this
  // machine's memory (a sparse one, or a device) is refused at once rather
  // than read until the allocator gives up.
  struct stat info;
  const bool regular = fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode);
  if (const uint64_t memory = PhysicalMemoryBytes(); regular && static_cast<uint64_t>(info.st_size) > memory) {
    std::fclose(file);
    return ResourceExhaustedError("'", path, "' holds ", static_cast<uint64_t>(info.st_size),
                                  " bytes, more than this machine's ", memory, " bytes of memory");
  }
  std::vector<uint8_t> bytes;
  try {
    if (regular) bytes.reserve(static_cast<size_t>(info.st_size));
    uint8_t chunk[1 << 16];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
  } catch (const std::exception&) {  // bad_alloc or length_error: nothing else throws here
    std::fclose(file);
    return ResourceExhaustedError("cannot hold '", path, "' in memory (", bytes.size(), " bytes read)");
  }
  const bool failed = std::ferror(file);
  const int error = errno;
  std::fclose(file);
  if (failed) return InvalidArgumentError("cannot read '", path, "': ", std::strerror(error));
  return bytes;
}

Status WriteFile(const std::string& path, std::span<const uint8_t> bytes) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return InvalidArgumentError("cannot write '", path, "': ", std::strerror(errno));
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  const int error = errno;
  if (std::fclose(file) != 0 || !written) {
    return InvalidArgumentError("cannot write '", path, "': ", std::strerror(written ? errno : error));
  }
  return OkStatus();
}

// ---- comparison ----

namespace {

std::string DescribeKind(const Tensor& tensor) {
  return StrCat(tensor.scalar ? "a scalar " : "a tensor ", tensor.DescribeType());
}

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

}  // namespace

Comparison CompareTensors(const Tensor& expected, const Tensor& actual, const Tolerance& tolerance) {
  Comparison result;
  // A ui16 .npy (how bf16 is saved) compares with a bf16 result bit for bit.
  ElementType type = expected.element_type;
  if (type == ElementType::kUint16 && actual.element_type == ElementType::kBFloat16) type = actual.element_type;
  // A scalar and a 0-d tensor of one type hold the same value.
  const bool kinds_differ = (expected.scalar && !actual.shape.empty()) || (actual.scalar && !expected.shape.empty());
  if (kinds_differ || type != actual.element_type || expected.shape != actual.shape) {
    result.message = StrCat("expected ", DescribeKind(expected), ", got ", DescribeKind(actual));
    return result;
  }
  result.element_count = actual.element_count();
  const size_t size = ByteSize(type);
  uint64_t first = 0;
  std::string why;
  for (uint64_t i = 0; i < result.element_count; ++i) {
    const uint8_t* e = expected.bytes.data() + i * size;
    const uint8_t* a = actual.bytes.data() + i * size;
    bool equal;
    std::string reason;
    if (IsFloat(type)) {
      const double ev = LoadFloat(type, e), av = LoadFloat(type, a);
      if (std::isnan(ev) || std::isnan(av)) {
        equal = std::isnan(ev) && std::isnan(av);
        reason = "NaN matches only NaN";
      } else if (std::isinf(ev) || std::isinf(av)) {
        equal = ev == av;
        reason = "infinities match only themselves";
      } else {
        const double diff = std::fabs(av - ev);
        result.max_abs_diff = std::max(result.max_abs_diff, diff);
        equal = diff <= tolerance.atol + tolerance.rtol * std::fabs(ev);
        reason = StrCat("|diff| ", FormatNumber(diff), " > atol ", FormatNumber(tolerance.atol), " + rtol ",
                        FormatNumber(tolerance.rtol), " * |expected|");
      }
    } else if (type == ElementType::kBool8) {
      equal = (*e != 0) == (*a != 0);
      reason = "booleans must be equal";
    } else {
      equal = std::memcmp(e, a, size) == 0;
      reason = "integers must be equal";
    }
    if (equal) continue;
    if (result.mismatch_count++ == 0) {
      first = i;
      why = reason;
    }
  }
  result.match = result.mismatch_count == 0;
  if (result.match) return result;
  Tensor expected_view = expected;
  expected_view.element_type = type;
  result.message = StrCat(actual.shape.empty() ? "" : StrCat("element ", FormatIndex(actual.shape, first), ": "),
                          "expected ", FormatElement(expected_view, first), ", got ", FormatElement(actual, first),
                          " (", why, ")");
  if (result.element_count > 1) {
    result.message += StrCat("; ", result.mismatch_count, " of ", result.element_count, " elements differ");
  }
  return result;
}

// ---- VM and HAL values ----

StatusOr<Ref<hal::BufferView>> CreateBufferView(hal::Allocator& allocator, const Tensor& tensor) {
  hal::BufferParams params;
  params.memory_types = hal::kMemoryHostVisible;
  params.usage = hal::kUsageAll;
  STRATA_ASSIGN_OR_RETURN(Ref<hal::Buffer> buffer, allocator.Allocate(params, tensor.bytes.size()));
  if (!tensor.bytes.empty()) {
    STRATA_ASSIGN_OR_RETURN(hal::MappedRange range, buffer->Map(hal::kAccessWrite));
    std::memcpy(range.bytes().data(), tensor.bytes.data(), tensor.bytes.size());
    STRATA_RETURN_IF_ERROR(range.Unmap());
  }
  return hal::BufferView::Create(std::move(buffer), 0, tensor.element_type, tensor.shape);
}

StatusOr<Tensor> ReadBufferView(hal::Device& device, const hal::BufferView& view) {
  Tensor tensor;
  tensor.element_type = view.element_type();
  tensor.shape.assign(view.shape().begin(), view.shape().end());
  if (!FindElementType(tensor.element_type)) {
    return InvalidArgumentError("a buffer view of unknown element type 0x",
                                Hex(static_cast<uint32_t>(tensor.element_type)));
  }
  STRATA_RETURN_IF_ERROR(ResizeBytes(&tensor, view.byte_length()));
  STRATA_RETURN_IF_ERROR(
      hal::ReadBuffer(device, *view.buffer(), view.byte_offset(), {tensor.bytes.data(), tensor.bytes.size()}));
  return tensor;
}

StatusOr<vm::Value> TensorToValue(const Tensor& tensor, char type, hal::Allocator& allocator) {
  if (type == 'r') {
    if (tensor.scalar) return InvalidArgumentError("expected a tensor, got the scalar ", FormatTensor(tensor));
    STRATA_ASSIGN_OR_RETURN(Ref<hal::BufferView> view, CreateBufferView(allocator, tensor));
    return vm::Value::FromRef(std::move(view));
  }
  const vm::ValueType want = vm::ValueTypeFromSignatureChar(type);
  if (want == vm::ValueType::kNone) return InvalidArgumentError("unknown signature type '", type, "'");
  if (!tensor.shape.empty()) {
    return InvalidArgumentError("expected ", vm::ValueTypeName(want), ", got a tensor ", tensor.DescribeType());
  }
  const uint8_t* p = tensor.bytes.data();
  const ElementType et = tensor.element_type;
  switch (want) {
    case vm::ValueType::kI32:
      if (et == ElementType::kInt32) return vm::Value::I32(Load<int32_t>(p));
      if (et == ElementType::kBool8) return vm::Value::I32(*p != 0);
      break;
    case vm::ValueType::kI64:
      if (et == ElementType::kInt64) return vm::Value::I64(Load<int64_t>(p));
      break;
    case vm::ValueType::kF32:
      if (et == ElementType::kFloat32) return vm::Value::F32(Load<float>(p));
      break;
    case vm::ValueType::kF64:
      if (et == ElementType::kFloat64) return vm::Value::F64(Load<double>(p));
      break;
    default: break;
  }
  return InvalidArgumentError("expected ", vm::ValueTypeName(want), ", got ", tensor.DescribeType());
}

StatusOr<Tensor> TensorFromValue(const vm::Value& value, hal::Device& device) {
  Tensor tensor;
  tensor.scalar = true;
  auto scalar = [&](ElementType type, const void* data) {
    tensor.element_type = type;
    const auto* bytes = static_cast<const uint8_t*>(data);
    tensor.bytes.assign(bytes, bytes + ByteSize(type));
    return tensor;
  };
  switch (value.type()) {
    case vm::ValueType::kI32: {
      int32_t v = value.i32();
      return scalar(ElementType::kInt32, &v);
    }
    case vm::ValueType::kI64: {
      int64_t v = value.i64();
      return scalar(ElementType::kInt64, &v);
    }
    case vm::ValueType::kF32: {
      float v = value.f32();
      return scalar(ElementType::kFloat32, &v);
    }
    case vm::ValueType::kF64: {
      double v = value.f64();
      return scalar(ElementType::kFloat64, &v);
    }
    case vm::ValueType::kRef:
      if (auto* view = RefCast<hal::BufferView>(value.ref().get())) return ReadBufferView(device, *view);
      break;
    case vm::ValueType::kNone: break;
  }
  return InvalidArgumentError("not a tensor or scalar: ", value.ToString());
}

}  // namespace strata::tools
