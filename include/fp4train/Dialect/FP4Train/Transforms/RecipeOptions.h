//===- RecipeOptions.h - Recipe overrides as options ------------*- C++ -*-===//
//
// The fields of RecipeOverrides as options: of a pass, of a pass pipeline,
// or of a tool's command line. Each field becomes one option named and
// documented by RecipeOverrides::forEachField, whose value is parsed and
// printed by OverrideValue: so `--help` lists the values, a bad value gets
// the same message everywhere, and an unset option prints as empty (the
// recipe's own choice) when a pipeline is printed and parsed back.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_RECIPEOPTIONS_H
#define FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_RECIPEOPTIONS_H

#include "fp4train/Dialect/FP4Train/IR/FP4TrainRecipes.h"

#include "mlir/Pass/Pass.h"
#include "llvm/Support/CommandLine.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace llvm::cl {
/// Parses an Override<T> option: empty leaves it unset, anything else goes
/// through OverrideValue<T>.
template <typename T>
class parser<mlir::fp4train::Override<T>>
    : public basic_parser<mlir::fp4train::Override<T>> {
public:
  using Value = mlir::fp4train::Override<T>;
  using basic_parser<Value>::basic_parser;

  bool parse(Option &option, StringRef, StringRef text, Value &value) {
    if (text.empty()) {
      value.reset();
      return false;
    }
    T parsed{};
    if (std::optional<std::string> error =
            mlir::fp4train::OverrideValue<T>::parse(text, parsed))
      return option.error(*error);
    value.emplace(parsed);
    return false;
  }

  StringRef getValueName() const override {
    return mlir::fp4train::OverrideValue<T>::getValueName();
  }

  void printOptionDiff(const Option &option, const Value &value,
                       const OptionValue<Value> &, size_t globalWidth) const {
    this->printOptionName(option, globalWidth);
    outs() << "= " << value << '\n';
  }
};
} // namespace llvm::cl

namespace mlir::fp4train {

/// The options of every field of RecipeOverrides, owned by a pass, by pass
/// (pipeline) options, or by a tool's command line.
class RecipeOverrideOptions {
public:
  /// Options of `pass`, for its textual options and `--help`.
  explicit RecipeOverrideOptions(Pass &pass) {
    addOptions([&](auto &field, StringRef name, StringRef description) {
      using Field = std::remove_reference_t<decltype(field)>;
      return std::make_unique<Pass::Option<Field>>(pass, name,
                                                   llvm::cl::desc(description));
    });
  }

  /// Options of a pass pipeline (PassPipelineOptions).
  explicit RecipeOverrideOptions(mlir::detail::PassOptions &owner) {
    addOptions([&](auto &field, StringRef name, StringRef description) {
      using Field = std::remove_reference_t<decltype(field)>;
      return std::make_unique<mlir::detail::PassOptions::Option<Field>>(
          owner, name, llvm::cl::desc(description));
    });
  }

  /// Command-line flags of a tool, listed under `category`.
  explicit RecipeOverrideOptions(llvm::cl::OptionCategory &category) {
    addOptions([&](auto &field, StringRef name, StringRef description) {
      using Field = std::remove_reference_t<decltype(field)>;
      // cl::desc keeps a reference: the text lives as long as the options.
      const std::string &text =
          descriptions.emplace_back("recipe override: " + description.str());
      return std::make_unique<llvm::cl::opt<Field>>(name, llvm::cl::desc(text),
                                                    llvm::cl::cat(category));
    });
  }

  RecipeOverrideOptions(const RecipeOverrideOptions &) = delete;
  RecipeOverrideOptions &operator=(const RecipeOverrideOptions &) = delete;

  /// The values of the options.
  RecipeOverrides getValue() const {
    RecipeOverrides overrides;
    size_t index = 0;
    RecipeOverrides::forEachField(
        overrides, [&](auto &field, StringRef, StringRef) {
          field = getOption<std::remove_reference_t<decltype(field)>>(index++)
                      .getValue();
        });
    return overrides;
  }

  /// Sets every option to its field of `overrides`.
  void setValue(const RecipeOverrides &overrides) {
    size_t index = 0;
    RecipeOverrides::forEachField(overrides, [&](const auto &field, StringRef,
                                                 StringRef) {
      using Field = std::remove_cv_t<std::remove_reference_t<decltype(field)>>;
      getOption<Field>(index++).setValue(field);
    });
  }

private:
  template <typename Make> void addOptions(Make &&make) {
    RecipeOverrides fields;
    RecipeOverrides::forEachField(
        fields, [&](auto &field, StringRef name, StringRef description) {
          options.push_back(make(field, name, description));
        });
  }

  /// Option `index`: every kind above derives from llvm::cl::opt<Field>.
  template <typename Field>
  llvm::cl::opt<Field> &getOption(size_t index) const {
    return static_cast<llvm::cl::opt<Field> &>(*options[index]);
  }

  std::vector<std::unique_ptr<llvm::cl::Option>> options;
  /// Descriptions made here (a deque never moves its elements).
  std::deque<std::string> descriptions;
};

} // namespace mlir::fp4train

#endif // FP4TRAIN_DIALECT_FP4TRAIN_TRANSFORMS_RECIPEOPTIONS_H
