//===- Error.h - Exception-free error values for the numerics library -*- C++
//-*-===//
//
// The numerics library is built without exceptions (LLVM's -fno-exceptions)
// and without LLVM, so recoverable failures (bad shapes, unreadable files) are
// returned as values that carry a one-line, human-readable message.
//
//===----------------------------------------------------------------------===//

#ifndef FP4TRAIN_NUMERICS_ERROR_H
#define FP4TRAIN_NUMERICS_ERROR_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace fp4train::numerics {

/// A failure: a lower-case, one-line message without a trailing period.
struct Error {
  std::string message;
};

/// Either a value of type T or an Error. Check with `if (!result)` before
/// dereferencing; `error()` is only valid on failure.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : value(std::move(value)) {}
  Expected(Error error) : failure(std::move(error)) {}

  explicit operator bool() const { return value.has_value(); }
  T &operator*() {
    assert(value && "dereferencing a failed Expected");
    return *value;
  }
  const T &operator*() const {
    assert(value && "dereferencing a failed Expected");
    return *value;
  }
  T *operator->() { return &**this; }
  const T *operator->() const { return &**this; }
  const Error &error() const {
    assert(!value && "no error in a successful Expected");
    return failure;
  }

private:
  std::optional<T> value;
  Error failure;
};

/// The value of a successful operation that produces nothing.
struct Success {};

/// Result of an operation that either succeeds or fails with a message.
using Status = Expected<Success>;

/// Builds an Error from a message.
inline Error makeError(std::string message) {
  return Error{std::move(message)};
}

} // namespace fp4train::numerics

#endif // FP4TRAIN_NUMERICS_ERROR_H
