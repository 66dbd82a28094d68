#include "drivers/runtime/session.h"

#include "hal/module/hal_module.h"

namespace strata::runtime {
namespace {

// "i32" etc. for a VM signature character; "ref" for a reference.
const char* VmTypeName(char vm_type) {
  return vm_type == 'r' ? "ref" : vm::ValueTypeName(vm::ValueTypeFromSignatureChar(vm_type));
}

// "i64, f32" from signature characters, or the source types when recorded.
std::string DescribeTypes(std::string_view vm_types, const std::vector<std::string_view>& source_types) {
  std::string out;
  if (!source_types.empty()) {
    for (std::string_view type : source_types) out += StrCat(out.empty() ? "" : ", ", type);
    return out;
  }
  for (char c : vm_types) out += StrCat(out.empty() ? "" : ", ", VmTypeName(c));
  return out;
}

// The names and parsed source types of one side (inputs or outputs) of a
// function. A source type that contradicts the VM type (a tensor passed as a
// scalar) is not used for checks.
void DescribeSide(std::string_view vm_types, const std::vector<std::string_view>& source_types,
                  std::vector<std::string>* names, std::vector<SourceType>* parsed) {
  const bool recorded = source_types.size() == vm_types.size();
  for (size_t i = 0; i < vm_types.size(); ++i) {
    names->push_back(recorded ? std::string(source_types[i]) : VmTypeName(vm_types[i]));
    parsed->push_back(recorded ? ParseSourceType(source_types[i]) : SourceType());
    if (parsed->back().tensor != (vm_types[i] == 'r')) parsed->back() = SourceType();
  }
}

}  // namespace

SourceType ParseSourceType(std::string_view text) {
  SourceType type;
  auto element_type = [](std::string_view name, ElementType* out) {
    std::optional<ElementType> found = ElementTypeFromName(name);
    if (found) *out = *found;
    return found.has_value();
  };
  constexpr std::string_view kPrefix = "tensor<";
  if (text.substr(0, kPrefix.size()) != kPrefix || text.back() != '>') {
    type.known = element_type(text, &type.element_type);
    return type;
  }
  std::string_view body = text.substr(kPrefix.size(), text.size() - kPrefix.size() - 1);
  for (size_t x; (x = body.find('x')) != std::string_view::npos;) {
    std::string_view dim = body.substr(0, x);
    body.remove_prefix(x + 1);
    if (type.rank == hal::BufferView::kMaxRank) return {};
    if (dim == "?") {
      type.shape[type.rank++] = -1;
      continue;
    }
    if (dim.empty() || dim.size() > 18) return {};
    int64_t value = 0;
    for (char c : dim) {
      if (c < '0' || c > '9') return {};
      value = value * 10 + (c - '0');
    }
    type.shape[type.rank++] = value;
  }
  if (!element_type(body, &type.element_type)) return {};
  type.known = true;
  type.tensor = true;
  return type;
}

std::string DescribeFunction(std::string_view name, const vm::FunctionInfo& fn) {
  return StrCat(name, "(", DescribeTypes(fn.arg_types, fn.source_arg_types), ") -> (",
                DescribeTypes(fn.result_types, fn.source_result_types), ")");
}

std::string Function::Describe() const { return DescribeFunction(name, *info); }

std::string DescribeTensorType(std::span<const int64_t> shape, ElementType element_type) {
  std::string out = "tensor<";
  for (int64_t dim : shape) out += StrCat(dim, "x");
  return out + ElementTypeName(element_type) + ">";
}

std::string DescribeTensor(const hal::BufferView& view) {
  return DescribeTensorType(view.shape(), view.element_type());
}

StatusOr<std::unique_ptr<Session>> Session::Create(Ref<hal::Device> device, Ref<vm::BytecodeModule> program) {
  if (!device) return InvalidArgumentError("session: the device is null");
  if (!program) return InvalidArgumentError("session: the program is null");
  std::unique_ptr<Session> session(new Session());
  session->device_ = std::move(device);
  session->program_ = std::move(program);
  for (const vm::ExportedFunction& exported : session->program_->exports()) {
    const vm::FunctionInfo& info = session->program_->functions()[exported.ordinal];
    Function fn;
    fn.name = std::string(exported.name);
    fn.signature = std::string(exported.signature);
    std::string_view args, results;
    if (!vm::SplitSignature(exported.signature, &args, &results)) {
      return InvalidArgumentError("function '", exported.name, "' has a malformed signature '", exported.signature,
                                  "'");
    }
    fn.arg_types = std::string(args);
    fn.result_types = std::string(results);
    DescribeSide(args, info.source_arg_types, &fn.input_types, &fn.inputs);
    DescribeSide(results, info.source_result_types, &fn.output_types, &fn.outputs);
    fn.info = &info;
    session->functions_.push_back(std::move(fn));
  }
  STRATA_ASSIGN_OR_RETURN(session->hal_module_, hal::CreateHalModule(session->device_));
  return session;
}

StatusOr<const Function*> Session::FindFunction(std::string_view name) const {
  for (const Function& fn : functions_) {
    if (fn.name == name) return &fn;
  }
  return NotFoundError("function '", name, "' not found in module '", program_->name(),
                       "'; available: ", ListFunctions());
}

std::string Session::ListFunctions() const {
  return JoinNames(functions_, [](const Function& fn) { return fn.Describe(); });
}

StatusOr<std::unique_ptr<Session::CallContext>> Session::CreateContext() const {
  auto call = std::make_unique<CallContext>();
  STRATA_ASSIGN_OR_RETURN(call->context, vm::Context::Create({hal_module_, program_}));
  for (const Function& fn : functions_) {
    // A name with a dot would read as "module.function".
    const std::string name =
        fn.name.find('.') == std::string::npos ? fn.name : StrCat(program_->name(), ".", fn.name);
    STRATA_ASSIGN_OR_RETURN(vm::FunctionHandle handle, call->context->LookupFunction(name));
    call->handles.push_back(handle);
  }
  return call;
}

Status Session::CheckInputCount(std::string_view description, std::string_view arg_types, size_t count) {
  if (count == arg_types.size()) return OkStatus();
  return InvalidArgumentError("function ", description, " expects ", arg_types.size(), " input",
                              arg_types.size() == 1 ? "" : "s", ", got ", count);
}

Status Session::CheckTensorInput(const Function& fn, size_t index, const hal::BufferView& view) {
  const SourceType& expected = fn.inputs[index];
  if (!expected.known) return OkStatus();
  bool match = expected.element_type == view.element_type() && expected.rank == view.rank();
  for (size_t d = 0; match && d < expected.rank; ++d) {
    match = expected.shape[d] < 0 || expected.shape[d] == view.shape()[d];
  }
  if (match) return OkStatus();
  return InvalidArgumentError(fn.name, ": input ", index, ": expected ", fn.input_types[index], ", got ",
                              DescribeTensor(view));
}

}  // namespace strata::runtime
