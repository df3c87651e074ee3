//===- LoweringChoice.cpp - what a lowering chose, on the IR --------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Schedule/LoweringChoice.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
/// The integer fields, by attribute name. Optional ones are left out at
/// their default (the query range of a version chosen per call).
struct Field {
  llvm::StringLiteral name;
  int64_t LoweringChoice::*member;
  bool optional = false;
  int64_t defaultValue = 0;

  bool present(const LoweringChoice &c) const {
    return !optional || c.*member != defaultValue;
  }
};
constexpr Field kFields[] = {
    {"tile_q", &LoweringChoice::tileQ},
    {"tile_k", &LoweringChoice::tileK},
    {"splits", &LoweringChoice::splits},
    {"register_rows", &LoweringChoice::registerRows},
    {"register_cols", &LoweringChoice::registerCols},
    {"vector_bits", &LoweringChoice::vectorBits},
    {"warps", &LoweringChoice::warps},
    {"wgmma", &LoweringChoice::wgmma, true, 0},
    {"min_queries", &LoweringChoice::minQueries, true, 0},
    {"max_queries", &LoweringChoice::maxQueries, true, -1},
};
} // namespace

void LoweringChoice::print(llvm::raw_ostream &os) const {
  os << "form " << form;
  if (tileQ || tileK)
    os << ", tiles " << tileQ << " x " << tileK;
  if (splits > 0)
    os << ", " << splits << " key splits";
  else if (splits < 0)
    os << ", key splits chosen at run time";
  if (registerRows)
    os << ", register tile " << registerRows << " x " << registerCols << " ("
       << vectorBits << "-bit)";
  if (!bf16Products.empty())
    os << ", bf16 products on " << bf16Products;
  if (warps)
    os << ", " << warps << " warps";
  if (wgmma)
    os << (wgmma > 1 ? ", S = Q K^T and O += P V on wgmma"
                     : ", S = Q K^T on wgmma");
  if (maxQueries >= 0)
    os << ", for Nq <= " << maxQueries;
  else if (minQueries > 0)
    os << ", for Nq >= " << minQueries;
}

void LoweringChoice::writeJSON(llvm::json::OStream &j) const {
  j.attribute("form", form);
  if (!bf16Products.empty())
    j.attribute("bf16_products", bf16Products);
  for (const Field &f : kFields)
    if (f.present(*this))
      j.attribute(f.name, this->*(f.member));
  // The line attn-run prints, for readers that show the choice (bench).
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  j.attribute("text", text);
}

void mlir::attn::recordLoweringChoice(Operation *op,
                                      const LoweringChoice &choice) {
  Operation *fn = isa<FunctionOpInterface>(op)
                      ? op
                      : op->getParentOfType<FunctionOpInterface>();
  if (!fn)
    return;
  Builder b(op->getContext());
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("form", b.getStringAttr(choice.form))};
  if (!choice.bf16Products.empty())
    fields.push_back(
        b.getNamedAttr("bf16_products", b.getStringAttr(choice.bf16Products)));
  for (const Field &f : kFields)
    if (f.present(choice))
      fields.push_back(
          b.getNamedAttr(f.name, b.getI64IntegerAttr(choice.*(f.member))));
  SmallVector<Attribute> all;
  if (auto old = fn->getAttrOfType<ArrayAttr>(kLoweringAttr))
    all.append(old.begin(), old.end());
  all.push_back(b.getDictionaryAttr(fields));
  fn->setAttr(kLoweringAttr, b.getArrayAttr(all));
}

void mlir::attn::updateLoweringChoices(
    Operation *fn, llvm::function_ref<void(LoweringChoice &)> update) {
  SmallVector<LoweringChoice> choices = readLoweringChoices(fn);
  fn->removeAttr(kLoweringAttr);
  for (LoweringChoice &c : choices) {
    update(c);
    recordLoweringChoice(fn, c);
  }
}

SmallVector<LoweringChoice> mlir::attn::readLoweringChoices(Operation *fn) {
  SmallVector<LoweringChoice> choices;
  auto all = fn->getAttrOfType<ArrayAttr>(kLoweringAttr);
  if (!all)
    return choices;
  for (Attribute a : all) {
    auto dict = dyn_cast<DictionaryAttr>(a);
    if (!dict)
      continue;
    LoweringChoice c;
    if (auto form = dict.getAs<StringAttr>("form"))
      c.form = form.str();
    if (auto products = dict.getAs<StringAttr>("bf16_products"))
      c.bf16Products = products.str();
    for (const Field &f : kFields)
      if (auto v = dict.getAs<IntegerAttr>(f.name))
        c.*(f.member) = v.getInt();
    choices.push_back(std::move(c));
  }
  return choices;
}
