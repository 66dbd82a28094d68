#include "tools/common/numpy_io.h"

#include <charconv>
#include <cstring>

#include "tools/common/file_io.h"

namespace strata::tools {
namespace {

// The byte-order character and code of a .npy dtype: "<f4", "|b1".
std::string NpyDescr(const ElementTypeInfo& info) {
  return StrCat(ElementTypeByteSize(info.type) == 1 ? "|" : "<", info.numpy);
}

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

bool IsNpy(std::span<const uint8_t> bytes) {
  return bytes.size() >= kNpyMagicSize && std::memcmp(bytes.data(), kNpyMagic, kNpyMagicSize) == 0;
}

StatusOr<Tensor> ParseNpy(std::span<const uint8_t> bytes) {
  if (!IsNpy(bytes)) {
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
    return status.Annotate("'", path, "': ");
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

}  // namespace strata::tools
