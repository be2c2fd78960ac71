//===- EnumOption.h - One message for a bad enum option value ---*- C++ -*-===//
//
// llvm::cl's parser of enum options answers a value it does not know with
// "Cannot find option named 'x'!". The options of fp4train's passes,
// pipelines and tools answer with the values they take instead, in the
// words the recipe overrides use:
//
//   for the --chip option: 'sm_80' is not one of sm_89, sm_90a, ...
//
// FP4TRAIN_ENUM_OPTION_PARSER(Enum), written once after the enum's
// declaration (at global scope), gives llvm::cl::parser<Enum> that parse.
// The option keeps its values (llvm::cl::values or a modifier of its own),
// its `--help` listing and MLIR's printing of pass options.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_SUPPORT_ENUMOPTION_H
#define FP4TRAIN_SUPPORT_ENUMOPTION_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace mlir::fp4train {

/// "'text' is not one of a, b, c": the message of a value that is none of
/// `names`.
inline std::string getNotOneOfMessage(llvm::StringRef text,
                                      llvm::ArrayRef<llvm::StringRef> names) {
  return "'" + text.str() + "' is not one of " + llvm::join(names, ", ");
}

/// The same message for a value none of the literal options of `parser`.
inline std::string
getNotOneOfMessage(llvm::StringRef text,
                   const llvm::cl::generic_parser_base &parser) {
  llvm::SmallVector<llvm::StringRef> names;
  for (unsigned i = 0, e = parser.getNumOptions(); i != e; ++i)
    names.push_back(parser.getOption(i));
  return getNotOneOfMessage(text, names);
}

} // namespace mlir::fp4train

/// Makes llvm::cl::parser<ENUM> name the valid values on a bad value (see
/// the file comment). Use at global scope, before any option of ENUM.
#define FP4TRAIN_ENUM_OPTION_PARSER(ENUM)                                      \
  template <>                                                                  \
  inline bool llvm::cl::parser<ENUM>::parse(                                   \
      llvm::cl::Option &option, llvm::StringRef argName, llvm::StringRef arg,  \
      ENUM &value) {                                                           \
    llvm::StringRef text = Owner.hasArgStr() ? arg : argName;                  \
    for (const OptionInfo &info : Values)                                      \
      if (info.Name == text) {                                                 \
        value = info.V.getValue();                                             \
        return false;                                                          \
      }                                                                        \
    return option.error(mlir::fp4train::getNotOneOfMessage(text, *this));      \
  }

#endif // FP4TRAIN_SUPPORT_ENUMOPTION_H
