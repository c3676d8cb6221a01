// Status, the error constructors and StatusCodeName.
#include "quiver/status.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace quiver {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kAlreadyExists: return "AlreadyExists";
    case StatusCode::kOutOfRange: return "OutOfRange";
    case StatusCode::kResourceExhausted: return "ResourceExhausted";
    case StatusCode::kFailedPrecondition: return "FailedPrecondition";
    case StatusCode::kUnimplemented: return "Unimplemented";
    case StatusCode::kCorruption: return "Corruption";
    case StatusCode::kIOError: return "IOError";
    case StatusCode::kDurabilityUnknown: return "DurabilityUnknown";
    case StatusCode::kPoisoned: return "Poisoned";
    case StatusCode::kInternal: return "Internal";
    case StatusCode::kCancelled: return "Cancelled";
    case StatusCode::kAborted: return "Aborted";
  }
  return "Unknown";
}

Status::Status(StatusCode code, std::string_view message) {
  // An OK code never carries state, so ok() stays a null check.
  if (code != StatusCode::kOk) state_.reset(new State{code, std::string(message)});
}

Status::Status(const Status& other) : state_(CopyState(other.state_.get())) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) state_.reset(CopyState(other.state_.get()));
  return *this;
}

namespace internal {

Status ImmortalStatus(StatusCode code, std::string_view message) {
  Status s(code, message);
  if (s.state_ != nullptr) s.state_->immortal = true;
  return s;
}

}  // namespace internal

std::string_view Status::message() const { return state_ ? std::string_view(state_->message) : ""; }

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(code()));
  out += ": ";
  out += state_->message;
  return out;
}

bool operator==(const Status& a, const Status& b) {
  return a.code() == b.code() && a.message() == b.message();
}

namespace internal {

void DieOfBadResultAccess(const Status& status) {
  // stderr is unbuffered: the message is out before abort() raises SIGABRT.
  // Written in pieces, allocating nothing: the error may be that memory ran
  // out, and a throw here would break "aborts with the message".
  auto put = [](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), stderr); };
  put("quiver: Result::value() called on an error: ");
  put(StatusCodeName(status.code()));
  put(": ");
  put(status.message());
  put("\n");
  std::abort();
}

}  // namespace internal

Status InvalidArgumentError(std::string_view m) { return Status(StatusCode::kInvalidArgument, m); }
Status NotFoundError(std::string_view m) { return Status(StatusCode::kNotFound, m); }
Status AlreadyExistsError(std::string_view m) { return Status(StatusCode::kAlreadyExists, m); }
Status OutOfRangeError(std::string_view m) { return Status(StatusCode::kOutOfRange, m); }
Status ResourceExhaustedError(std::string_view m) { return Status(StatusCode::kResourceExhausted, m); }
Status FailedPreconditionError(std::string_view m) { return Status(StatusCode::kFailedPrecondition, m); }
Status UnimplementedError(std::string_view m) { return Status(StatusCode::kUnimplemented, m); }
Status CorruptionError(std::string_view m) { return Status(StatusCode::kCorruption, m); }
Status IOError(std::string_view m) { return Status(StatusCode::kIOError, m); }
Status InternalError(std::string_view m) { return Status(StatusCode::kInternal, m); }
Status CancelledError(std::string_view m) { return Status(StatusCode::kCancelled, m); }
Status AbortedError(std::string_view m) { return Status(StatusCode::kAborted, m); }

}  // namespace quiver
