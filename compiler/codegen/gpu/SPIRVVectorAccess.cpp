//===- SPIRVVectorAccess.cpp - 16-byte loads and stores of bindings -------===//
//
// strata-spirv-vector-access (Passes.td). A binding is a runtime array of
// 32-bit scalars, and SPIR-V's logical addressing has no pointer casts, so
// four adjacent elements that the kernel moves together (a matmul's row of
// B, a row of C's tile) are four loads or stores: a driver cannot make one
// 16-byte access of them without knowing that the first index is a
// multiple of 4. This pass knows it where the index arithmetic shows it and
// reads or writes such groups through a second variable on the same
// binding, a runtime array of 4-vectors, at the index divided by 4.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/gpu/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_SPIRVVECTORACCESSPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

/// An i32 index as a sum of terms (value times coefficient) and a
/// constant, in the wrapping arithmetic of 32 bits.
struct Linear {
  llvm::SmallDenseMap<Value, uint32_t, 4> terms;
  uint32_t constant = 0;

  void add(const Linear &other, uint32_t scale) {
    for (auto [value, coefficient] : other.terms) {
      uint32_t &sum = terms[value];
      sum += coefficient * scale;
      if (sum == 0)
        terms.erase(value);
    }
    constant += other.constant * scale;
  }
  /// Every value it takes is a multiple of 4.
  bool multipleOf4() const {
    if (constant % 4)
      return false;
    for (auto [value, coefficient] : terms)
      if (coefficient % 4)
        return false;
    return true;
  }
  /// `this - base` is the constant `delta`.
  bool isAt(const Linear &base, uint32_t delta) const {
    Linear difference = *this;
    difference.add(base, ~0u);  // times -1
    return difference.terms.empty() && difference.constant == delta;
  }
};

std::optional<uint32_t> constantOf(Value value) {
  if (auto constant = value.getDefiningOp<spirv::ConstantOp>())
    if (auto integer = dyn_cast<IntegerAttr>(constant.getValue()))
      if (integer.getType().isInteger(32))
        return uint32_t(integer.getValue().getZExtValue());
  return std::nullopt;
}

class Decomposer {
public:
  const Linear &of(Value value, int depth = 0) {
    auto found = cache.find(value);
    if (found != cache.end())
      return found->second;
    Linear result = compute(value, depth);
    return cache.try_emplace(value, std::move(result)).first->second;
  }

private:
  Linear compute(Value value, int depth) {
    Linear result;
    if (std::optional<uint32_t> constant = constantOf(value)) {
      result.constant = *constant;
      return result;
    }
    Operation *op = value.getDefiningOp();
    if (op && depth < 24) {
      if (auto add = dyn_cast<spirv::IAddOp>(op)) {
        result.add(of(add.getOperand1(), depth + 1), 1);
        result.add(of(add.getOperand2(), depth + 1), 1);
        return result;
      }
      if (auto sub = dyn_cast<spirv::ISubOp>(op)) {
        result.add(of(sub.getOperand1(), depth + 1), 1);
        result.add(of(sub.getOperand2(), depth + 1), ~0u);
        return result;
      }
      if (auto mul = dyn_cast<spirv::IMulOp>(op)) {
        Value lhs = mul.getOperand1(), rhs = mul.getOperand2();
        if (std::optional<uint32_t> c = constantOf(lhs)) {
          result.add(of(rhs, depth + 1), *c);
          return result;
        }
        if (std::optional<uint32_t> c = constantOf(rhs)) {
          result.add(of(lhs, depth + 1), *c);
          return result;
        }
      }
      if (auto shift = dyn_cast<spirv::ShiftLeftLogicalOp>(op))
        if (std::optional<uint32_t> c = constantOf(shift.getOperand2());
            c && *c < 32) {
          result.add(of(shift.getOperand1(), depth + 1), 1u << *c);
          return result;
        }
    }
    result.terms[value] = 1;
    return result;
  }

  llvm::DenseMap<Value, Linear> cache;
};

/// A binding variable whose elements are 32-bit scalars.
bool isScalarBinding(spirv::GlobalVariableOp variable) {
  auto pointer = dyn_cast<spirv::PointerType>(variable.getType());
  if (!pointer || pointer.getStorageClass() != spirv::StorageClass::StorageBuffer ||
      !variable.getBinding() || !variable.getDescriptorSet())
    return false;
  auto block = dyn_cast<spirv::StructType>(pointer.getPointeeType());
  if (!block || block.getNumElements() != 1)
    return false;
  auto array = dyn_cast<spirv::RuntimeArrayType>(block.getElementType(0));
  return array && array.getArrayStride() == 4 &&
         array.getElementType().isIntOrFloat() &&
         array.getElementType().getIntOrFloatBitWidth() == 32;
}

/// An element access of a binding: a load or store through
/// `AccessChain %binding[0, index]`.
struct Access {
  Operation *op = nullptr;  // spirv.Load or spirv.Store
  spirv::GlobalVariableOp binding;
  Value index;
};

std::optional<Access> accessOf(Operation *op, SymbolTable &symbols) {
  Value pointer;
  if (auto load = dyn_cast<spirv::LoadOp>(op))
    pointer = load.getPtr();
  else if (auto store = dyn_cast<spirv::StoreOp>(op))
    pointer = store.getPtr();
  else
    return std::nullopt;
  auto chain = pointer.getDefiningOp<spirv::AccessChainOp>();
  if (!chain || chain.getIndices().size() != 2 ||
      constantOf(chain.getIndices()[0]) != 0u)
    return std::nullopt;
  auto address = chain.getBasePtr().getDefiningOp<spirv::AddressOfOp>();
  if (!address)
    return std::nullopt;
  auto binding =
      symbols.lookup<spirv::GlobalVariableOp>(address.getVariableAttr().getValue());
  if (!binding || !isScalarBinding(binding))
    return std::nullopt;
  return Access{op, binding, chain.getIndices()[1]};
}

/// Four accesses of adjacent elements, the first at a multiple of 4, to be
/// made one access of a 4-vector.
struct Group {
  spirv::GlobalVariableOp binding;
  SmallVector<Operation *, 4> accesses;  // element order
  Operation *construct = nullptr;        // the loads' CompositeConstruct
  Value index;                           // of the first element
};

struct SPIRVVectorAccessPass
    : impl::SPIRVVectorAccessPassBase<SPIRVVectorAccessPass> {
  void runOnOperation() override {
    spirv::ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Per binding: its groups, and how many accesses it has.
    struct Plan {
      SmallVector<Group> groups;
      int64_t accesses = 0;
      bool written = false, otherUses = false;
    };
    llvm::MapVector<Operation *, Plan> plans;
    for (auto variable : module.getOps<spirv::GlobalVariableOp>())
      if (isScalarBinding(variable))
        plans[variable] = Plan{};
    if (plans.empty())
      return;

    for (auto function : module.getOps<spirv::FuncOp>()) {
      Decomposer decomposer;
      // Every use of a binding: an element access, or something else.
      function.walk([&](spirv::AddressOfOp address) {
        auto variable = symbols.lookup<spirv::GlobalVariableOp>(
            address.getVariableAttr().getValue());
        auto plan = plans.find(variable);
        if (plan == plans.end())
          return;
        for (Operation *user : address->getUsers()) {
          auto chain = dyn_cast<spirv::AccessChainOp>(user);
          if (!chain) {
            plan->second.otherUses = true;
            continue;
          }
          for (Operation *access : chain->getUsers()) {
            std::optional<Access> known = accessOf(access, symbols);
            if (!known || known->binding != variable) {
              plan->second.otherUses = true;
              continue;
            }
            ++plan->second.accesses;
            plan->second.written |= isa<spirv::StoreOp>(access);
          }
        }
      });
      function.walk([&](spirv::CompositeConstructOp construct) {
        if (std::optional<Group> group = loadGroup(construct, symbols, decomposer))
          plans[group->binding].groups.push_back(std::move(*group));
      });
      function.walk([&](Block *block) {
        for (Group &group : storeGroups(*block, symbols, decomposer))
          plans[group.binding].groups.push_back(std::move(group));
      });
    }

    for (auto &[op, plan] : plans) {
      auto variable = cast<spirv::GlobalVariableOp>(op);
      if (plan.groups.empty())
        continue;
      // A second variable on a binding that is written would let the
      // driver assume that the two do not alias: only where every access
      // goes through the vectors.
      const bool whole =
          !plan.otherUses && int64_t(4 * plan.groups.size()) == plan.accesses;
      if (plan.written && !whole)
        continue;
      spirv::GlobalVariableOp vectors = vectorVariable(variable, symbols);
      for (Group &group : plan.groups)
        rewrite(group, vectors);
      if (whole)
        module.walk([&](spirv::AddressOfOp address) {
          if (address.getVariable() == variable.getSymName() && address->use_empty())
            address->erase();
        });
      const bool unused = whole && SymbolTable::symbolKnownUseEmpty(variable, module);
      updateInterfaces(module, variable, vectors, /*keep=*/!unused);
      if (unused)
        variable.erase();
    }
  }

  /// `construct` of four loads of adjacent elements of one binding.
  static std::optional<Group> loadGroup(spirv::CompositeConstructOp construct,
                                        SymbolTable &symbols,
                                        Decomposer &decomposer) {
    auto type = dyn_cast<VectorType>(construct.getType());
    if (!type || type.getNumElements() != 4 ||
        construct.getConstituents().size() != 4)
      return std::nullopt;
    Group group;
    group.construct = construct;
    std::optional<Access> first;
    for (auto [i, value] : llvm::enumerate(construct.getConstituents())) {
      auto load = value.getDefiningOp<spirv::LoadOp>();
      if (!load || load->getBlock() != construct->getBlock() || !load->hasOneUse())
        return std::nullopt;
      std::optional<Access> access = accessOf(load, symbols);
      if (!access || access->op->getResult(0).getType() != type.getElementType())
        return std::nullopt;
      if (i == 0) {
        first = access;
        if (!decomposer.of(access->index).multipleOf4())
          return std::nullopt;
      } else if (access->binding != first->binding ||
                 !decomposer.of(access->index).isAt(decomposer.of(first->index), i)) {
        return std::nullopt;
      }
      group.accesses.push_back(load);
    }
    // The vector is read where the elements are used: nothing between the
    // first load and there may write memory or synchronize.
    Operation *earliest = group.accesses[0];
    for (Operation *load : group.accesses)
      if (load->isBeforeInBlock(earliest))
        earliest = load;
    for (Operation *op = earliest; op != construct; op = op->getNextNode())
      if (!isa<spirv::LoadOp>(op) && !isMemoryEffectFree(op))
        return std::nullopt;
    group.index = first->index;
    group.binding = first->binding;
    return group;
  }

  /// Stores of four adjacent elements of one binding, in element order,
  /// with nothing between the first and the last that reads that binding,
  /// writes memory or synchronizes.
  static SmallVector<Group> storeGroups(Block &block, SymbolTable &symbols,
                                        Decomposer &decomposer) {
    SmallVector<Group> groups;
    SmallVector<Access, 4> open;  // the group being gathered
    for (Operation &op : block) {
      std::optional<Access> access = accessOf(&op, symbols);
      if (access && isa<spirv::StoreOp>(op)) {
        if (!open.empty() &&
            (access->binding != open[0].binding ||
             !decomposer.of(access->index)
                  .isAt(decomposer.of(open[0].index), open.size())))
          open.clear();
        if (open.empty() && !decomposer.of(access->index).multipleOf4())
          continue;
        open.push_back(*access);
        if (open.size() == 4) {
          Group group;
          for (const Access &store : open)
            group.accesses.push_back(store.op);
          group.index = open[0].index;
          group.binding = open[0].binding;
          groups.push_back(std::move(group));
          open.clear();
        }
        continue;
      }
      if (open.empty() || isMemoryEffectFree(&op))
        continue;
      // Loads of other bindings may stay between the stores.
      if (access && isa<spirv::LoadOp>(op) && access->binding != open[0].binding)
        continue;
      open.clear();
    }
    return groups;
  }

  /// The 4-vector view of `variable`'s binding.
  static spirv::GlobalVariableOp vectorVariable(spirv::GlobalVariableOp variable,
                                                SymbolTable &symbols) {
    auto pointer = cast<spirv::PointerType>(variable.getType());
    auto array = cast<spirv::RuntimeArrayType>(
        cast<spirv::StructType>(pointer.getPointeeType()).getElementType(0));
    auto vector = VectorType::get({4}, array.getElementType());
    auto block = spirv::StructType::get({spirv::RuntimeArrayType::get(vector, 16)},
                                        {0});
    OpBuilder b(variable);
    b.setInsertionPointAfter(variable);
    auto vectors = spirv::GlobalVariableOp::create(
        b, variable.getLoc(),
        spirv::PointerType::get(block, spirv::StorageClass::StorageBuffer),
        (variable.getSymName() + "_vec4").str(), *variable.getDescriptorSet(),
        *variable.getBinding());
    symbols.insert(vectors);
    return vectors;
  }

  static void rewrite(Group &group, spirv::GlobalVariableOp vectors) {
    Operation *at = group.construct ? group.construct : group.accesses.back();
    OpBuilder b(at);
    Location loc = at->getLoc();
    auto address = spirv::AddressOfOp::create(b, loc, vectors);
    Value zero = spirv::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(0));
    Value two = spirv::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(2));
    Value index = spirv::ShiftRightLogicalOp::create(b, loc, group.index, two);
    Value element = spirv::AccessChainOp::create(b, loc, address, ValueRange{zero, index});
    if (group.construct) {
      Value vector = spirv::LoadOp::create(b, loc, element);
      group.construct->getResult(0).replaceAllUsesWith(vector);
      group.construct->erase();
    } else {
      SmallVector<Value, 4> values;
      for (Operation *store : group.accesses)
        values.push_back(cast<spirv::StoreOp>(store).getValue());
      auto type = VectorType::get({4}, values[0].getType());
      Value vector = spirv::CompositeConstructOp::create(b, loc, type, values);
      spirv::StoreOp::create(b, loc, element, vector);
    }
    for (Operation *access : group.accesses) {
      Operation *chain = access->getOperand(0).getDefiningOp();
      access->erase();
      if (chain->use_empty())
        chain->erase();
    }
  }

  /// Entry points that list `variable` (SPIR-V 1.4 and later want storage
  /// buffers among them) list `vectors` too, and `variable` only if `keep`.
  static void updateInterfaces(spirv::ModuleOp module, spirv::GlobalVariableOp variable,
                               spirv::GlobalVariableOp vectors, bool keep) {
    for (auto entry : module.getOps<spirv::EntryPointOp>()) {
      SmallVector<Attribute> interface;
      bool listed = false;
      for (Attribute symbol : entry.getInterface()) {
        if (cast<FlatSymbolRefAttr>(symbol).getValue() == variable.getSymName()) {
          listed = true;
          if (!keep)
            continue;
        }
        interface.push_back(symbol);
      }
      if (!listed)
        continue;
      interface.push_back(FlatSymbolRefAttr::get(vectors.getSymNameAttr()));
      entry.setInterfaceAttr(ArrayAttr::get(module.getContext(), interface));
    }
  }
};

} // namespace
} // namespace strata::gpu
