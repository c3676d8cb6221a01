// Status and Result<T>: how every fallible Quiver call reports failure.
//
// Quiver never throws across its API. A call that can fail returns a `Status`
// (no value) or a `Result<T>` (a value or a non-OK status); running out of
// memory there is ResourceExhausted. Both are [[nodiscard]]. The codes are
// canonical and stable; messages are for humans and may change between
// releases.
//
// The exception: a call that has no status to return and hands back or
// builds a standard container or string (recording into a WriteBatch,
// copying a PropertyValue or a batch, Snapshot::Labels() and the other
// listings, PropertyView::ToValue) allocates as the standard library does,
// and out of memory it throws std::bad_alloc, as the container would; each
// such call says so, and leaves its object as it was.
//
// Example:
//   quiver::Result<quiver::CommitInfo> r = graph->Write(std::move(batch));
//   if (!r.ok()) { std::cerr << r.status().ToString() << "\n"; return; }
//   quiver::VertexId first = r->vertices[0];
#ifndef QUIVER_STATUS_H_
#define QUIVER_STATUS_H_

#include <cassert>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace quiver {

// Canonical status codes. Values are part of the API: never renumber.
enum class StatusCode : std::uint8_t {
  kOk = 0,
  kInvalidArgument = 1,     // the caller's input is malformed (bad UTF-8, NaN, foreign handle)
  kNotFound = 2,            // an id names no live element in the version the batch sees
  kAlreadyExists = 3,       // something that must be unique is not
  kOutOfRange = 4,          // a value or count is past a configured limit
  kResourceExhausted = 5,   // memory, id space or queue capacity exhausted
  kFailedPrecondition = 6,  // the object is not in a state that allows the call (closed graph)
  kUnimplemented = 7,       // the requested mode is not available in this build
  kCorruption = 8,          // persistent data failed its checks
  kIOError = 9,             // the operating system reported an I/O failure
  kDurabilityUnknown = 10,  // the write may or may not survive a restart
  kPoisoned = 11,           // an earlier I/O failure stopped all writes
  kInternal = 12,           // an invariant of Quiver itself failed: a bug
  kCancelled = 13,          // the caller cancelled the operation before it finished
  kAborted = 14,            // a batch's expectation (WriteBatch::Expect*) did not hold: retry
};

// Returns the stable name of `code`, e.g. "InvalidArgument".
std::string_view StatusCodeName(StatusCode code);

class Status;

namespace internal {
// A status whose state is built once and never freed, so that copying it
// allocates nothing (the copy shares the state): for answers that must be
// given even when memory has run out. Building one allocates; build it
// before it is needed and keep it (e.g. behind a static pointer, never
// destroyed) for the life of the process.
Status ImmortalStatus(StatusCode code, std::string_view message);
}  // namespace internal

// A success or a failure with a code and a message. An OK status holds no
// heap memory; copying a non-OK status copies its message (except an
// internal::ImmortalStatus, whose copies share it and allocate nothing).
class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string_view message);

  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  static Status Ok() { return Status(); }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  // The message; empty for OK.
  std::string_view message() const;
  // "OK" or "<CodeName>: <message>".
  std::string ToString() const;

  // Marks a status as deliberately ignored.
  void IgnoreError() const {}

 private:
  friend Status internal::ImmortalStatus(StatusCode code, std::string_view message);
  struct State {
    StatusCode code;
    std::string message;
    bool immortal = false;  // never freed; copies share it
  };
  struct StateDeleter {
    void operator()(State* s) const noexcept {
      if (!s->immortal) delete s;
    }
  };
  static State* CopyState(const State* s) {
    if (s == nullptr || s->immortal) return const_cast<State*>(s);
    return new State(*s);
  }
  std::unique_ptr<State, StateDeleter> state_;
};

bool operator==(const Status& a, const Status& b);

// Convenience constructors, one per code.
Status InvalidArgumentError(std::string_view message);
Status NotFoundError(std::string_view message);
Status AlreadyExistsError(std::string_view message);
Status OutOfRangeError(std::string_view message);
Status ResourceExhaustedError(std::string_view message);
Status FailedPreconditionError(std::string_view message);
Status UnimplementedError(std::string_view message);
Status CorruptionError(std::string_view message);
Status IOError(std::string_view message);
Status InternalError(std::string_view message);
Status CancelledError(std::string_view message);
Status AbortedError(std::string_view message);

namespace internal {
// Writes "quiver: Result::value() called on an error: <status>" to stderr and
// aborts. What every value accessor of a failed Result does, in every build
// type.
[[noreturn]] void DieOfBadResultAccess(const Status& status);
}  // namespace internal

// A value of type T or a non-OK Status.
//
// value(), operator* and operator-> require ok(): on an error they print the
// status to stderr and abort the process, in every build type (they never
// throw and never return garbage). So `Graph::Open(o, dir).value()` is a fine
// idiom where failing to open is fatal anyway; where it is not, test ok() or
// use value_or().
template <typename T>
class [[nodiscard]] Result {
 public:
  // Implicit from a value and from a non-OK status, so functions can
  // `return value;` or `return SomeError(...);`.
  Result(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.ok() && "Result constructed from an OK status without a value");
    if (status_.ok()) status_ = Status(StatusCode::kInternal, "Result from OK status without value");
  }

  bool ok() const { return value_.has_value(); }
  // OK when a value is held; the failure otherwise.
  const Status& status() const { return status_; }

  // The value. Requires ok(); aborts with the status otherwise.
  T& value() & {
    CheckOk();
    return *value_;
  }
  const T& value() const& {
    CheckOk();
    return *value_;
  }
  T&& value() && {
    CheckOk();
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The value if ok(), else `fallback` converted to T. Never aborts.
  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? *value_ : static_cast<T>(std::forward<U>(fallback));
  }
  template <typename U>
  T value_or(U&& fallback) && {
    return ok() ? std::move(*value_) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  void CheckOk() const {
    if (!ok()) internal::DieOfBadResultAccess(status_);
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace quiver

#define QUIVER_STATUS_CONCAT_INNER_(a, b) a##b
#define QUIVER_STATUS_CONCAT_(a, b) QUIVER_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define QUIVER_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::quiver::Status quiver_status_ = (expr);        \
    if (!quiver_status_.ok()) return quiver_status_; \
  } while (0)

// `QUIVER_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from a Result's
// value, or returns its status from the enclosing function.
#define QUIVER_ASSIGN_OR_RETURN(lhs, expr) \
  QUIVER_ASSIGN_OR_RETURN_IMPL_(QUIVER_STATUS_CONCAT_(quiver_result_, __LINE__), lhs, expr)
#define QUIVER_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#endif  // QUIVER_STATUS_H_
