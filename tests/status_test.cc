// Tests for Status, Result<T> and the QUIVER_RETURN_IF_ERROR /
// QUIVER_ASSIGN_OR_RETURN macros (include/quiver/status.h).
#include "quiver/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace quiver {
namespace {

constexpr StatusCode kAllCodes[] = {
    StatusCode::kOk,
    StatusCode::kInvalidArgument,
    StatusCode::kNotFound,
    StatusCode::kAlreadyExists,
    StatusCode::kOutOfRange,
    StatusCode::kResourceExhausted,
    StatusCode::kFailedPrecondition,
    StatusCode::kUnimplemented,
    StatusCode::kCorruption,
    StatusCode::kIOError,
    StatusCode::kDurabilityUnknown,
    StatusCode::kPoisoned,
    StatusCode::kInternal,
    StatusCode::kCancelled,
    StatusCode::kAborted,
};

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_TRUE(s.message().empty());
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok(), Status());
}

TEST(StatusTest, CodeValuesAreStable) {
  // Persisted / API values: never renumber.
  EXPECT_EQ(static_cast<int>(StatusCode::kOk), 0);
  EXPECT_EQ(static_cast<int>(StatusCode::kInvalidArgument), 1);
  EXPECT_EQ(static_cast<int>(StatusCode::kNotFound), 2);
  EXPECT_EQ(static_cast<int>(StatusCode::kAlreadyExists), 3);
  EXPECT_EQ(static_cast<int>(StatusCode::kOutOfRange), 4);
  EXPECT_EQ(static_cast<int>(StatusCode::kResourceExhausted), 5);
  EXPECT_EQ(static_cast<int>(StatusCode::kFailedPrecondition), 6);
  EXPECT_EQ(static_cast<int>(StatusCode::kUnimplemented), 7);
  EXPECT_EQ(static_cast<int>(StatusCode::kCorruption), 8);
  EXPECT_EQ(static_cast<int>(StatusCode::kIOError), 9);
  EXPECT_EQ(static_cast<int>(StatusCode::kDurabilityUnknown), 10);
  EXPECT_EQ(static_cast<int>(StatusCode::kPoisoned), 11);
  EXPECT_EQ(static_cast<int>(StatusCode::kInternal), 12);
  EXPECT_EQ(static_cast<int>(StatusCode::kCancelled), 13);
  EXPECT_EQ(static_cast<int>(StatusCode::kAborted), 14);
}

TEST(StatusTest, CodeNamesAreCanonical) {
  EXPECT_EQ(StatusCodeName(StatusCode::kInvalidArgument), "InvalidArgument");
  EXPECT_EQ(StatusCodeName(StatusCode::kNotFound), "NotFound");
  EXPECT_EQ(StatusCodeName(StatusCode::kAlreadyExists), "AlreadyExists");
  EXPECT_EQ(StatusCodeName(StatusCode::kOutOfRange), "OutOfRange");
  EXPECT_EQ(StatusCodeName(StatusCode::kResourceExhausted), "ResourceExhausted");
  EXPECT_EQ(StatusCodeName(StatusCode::kFailedPrecondition), "FailedPrecondition");
  EXPECT_EQ(StatusCodeName(StatusCode::kUnimplemented), "Unimplemented");
  EXPECT_EQ(StatusCodeName(StatusCode::kCorruption), "Corruption");
  EXPECT_EQ(StatusCodeName(StatusCode::kIOError), "IOError");
  EXPECT_EQ(StatusCodeName(StatusCode::kDurabilityUnknown), "DurabilityUnknown");
  EXPECT_EQ(StatusCodeName(StatusCode::kPoisoned), "Poisoned");
  EXPECT_EQ(StatusCodeName(StatusCode::kInternal), "Internal");
  EXPECT_EQ(StatusCodeName(StatusCode::kCancelled), "Cancelled");
  EXPECT_EQ(StatusCodeName(StatusCode::kAborted), "Aborted");
}

TEST(StatusTest, CodeNamesAreDistinctAndNonEmpty) {
  std::set<std::string> names;
  for (StatusCode c : kAllCodes) {
    std::string name(StatusCodeName(c));
    EXPECT_FALSE(name.empty()) << static_cast<int>(c);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), std::size(kAllCodes));
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s(StatusCode::kNotFound, "vertex 7");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "vertex 7");
  EXPECT_EQ(s.ToString(), "NotFound: vertex 7");
}

TEST(StatusTest, ConvenienceConstructorsSetTheirCode) {
  const std::vector<std::pair<Status, StatusCode>> cases = {
      {InvalidArgumentError("m"), StatusCode::kInvalidArgument},
      {NotFoundError("m"), StatusCode::kNotFound},
      {AlreadyExistsError("m"), StatusCode::kAlreadyExists},
      {OutOfRangeError("m"), StatusCode::kOutOfRange},
      {ResourceExhaustedError("m"), StatusCode::kResourceExhausted},
      {FailedPreconditionError("m"), StatusCode::kFailedPrecondition},
      {UnimplementedError("m"), StatusCode::kUnimplemented},
      {CorruptionError("m"), StatusCode::kCorruption},
      {IOError("m"), StatusCode::kIOError},
      {InternalError("m"), StatusCode::kInternal},
      {CancelledError("m"), StatusCode::kCancelled},
      {AbortedError("m"), StatusCode::kAborted},
  };
  for (const auto& [status, code] : cases) {
    EXPECT_FALSE(status.ok());
    EXPECT_EQ(status.code(), code);
    EXPECT_EQ(status.message(), "m");
    EXPECT_EQ(status.ToString(), std::string(StatusCodeName(code)) + ": m");
  }
}

TEST(StatusTest, CopyCopiesMessage) {
  Status a = OutOfRangeError("too long");
  Status b(a);
  EXPECT_EQ(b.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(b.message(), "too long");
  EXPECT_EQ(a.message(), "too long");  // the source is intact
  EXPECT_EQ(a, b);

  Status c;
  c = a;
  EXPECT_EQ(c, a);
  c = Status();  // back to OK
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(a.code(), StatusCode::kOutOfRange);

  Status ok;
  Status ok_copy(ok);
  EXPECT_TRUE(ok_copy.ok());
}

TEST(StatusTest, MoveTransfersState) {
  Status a = CorruptionError("bad crc");
  Status b(std::move(a));
  EXPECT_EQ(b.code(), StatusCode::kCorruption);
  EXPECT_EQ(b.message(), "bad crc");
  Status c;
  c = std::move(b);
  EXPECT_EQ(c.code(), StatusCode::kCorruption);
  EXPECT_EQ(c.message(), "bad crc");
}

TEST(StatusTest, SelfCopyAssignmentKeepsState) {
  Status a = NotFoundError("x");
  const Status& alias = a;
  a = alias;
  EXPECT_EQ(a.code(), StatusCode::kNotFound);
  EXPECT_EQ(a.message(), "x");
}

TEST(StatusTest, Equality) {
  EXPECT_EQ(NotFoundError("a"), NotFoundError("a"));
  EXPECT_FALSE(NotFoundError("a") == InvalidArgumentError("a"));
  EXPECT_FALSE(NotFoundError("a") == Status());
  EXPECT_FALSE(Status() == NotFoundError("a"));
}

TEST(StatusTest, MessageMayContainAnyBytes) {
  std::string msg("a\0b", 3);
  Status s(StatusCode::kInternal, msg);
  EXPECT_EQ(s.message(), msg);
}

TEST(ResultTest, HoldsValue) {
  Result<int> r(42);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(r.value(), 42);
  EXPECT_EQ(*r, 42);
  *r = 7;
  EXPECT_EQ(r.value(), 7);
}

TEST(ResultTest, HoldsError) {
  Result<int> r(NotFoundError("nope"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "nope");
}

TEST(ResultTest, ArrowAccessesMembers) {
  Result<std::string> r(std::string("hello"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 5u);
  const Result<std::string>& cr = r;
  EXPECT_EQ(cr->front(), 'h');
  EXPECT_EQ(*cr, "hello");
}

TEST(ResultTest, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r(std::make_unique<int>(5));
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 5);

  Result<std::unique_ptr<int>> r2(std::make_unique<int>(6));
  std::unique_ptr<int> q = *std::move(r2);
  EXPECT_EQ(*q, 6);
}

TEST(ResultTest, ReturnsFromFunction) {
  auto make = [](bool good) -> Result<std::vector<int>> {
    if (!good) return InvalidArgumentError("bad");
    return std::vector<int>{1, 2, 3};
  };
  Result<std::vector<int>> good = make(true);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->size(), 3u);
  Result<std::vector<int>> bad = make(false);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

// value(), operator* and operator-> of a failed Result stop the process with
// the status in every build type (a release build used to return a garbage
// reference), never throwing and never returning.
TEST(ResultDeathTest, ValueOfErrorAbortsWithTheStatus) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Result<int> r(NotFoundError("no such vertex 7"));
  EXPECT_DEATH((void)r.value(), "NotFound: no such vertex 7");
  EXPECT_DEATH((void)*r, "NotFound: no such vertex 7");
  const Result<int>& cr = r;
  EXPECT_DEATH((void)cr.value(), "NotFound: no such vertex 7");
  Result<std::string> s(IOError("disk gone"));
  EXPECT_DEATH((void)s->size(), "IOError: disk gone");
  EXPECT_DEATH((void)std::move(s).value(), "IOError: disk gone");
}

TEST(ResultTest, ValueOrGivesTheFallbackOnError) {
  Result<int> bad(NotFoundError("nope"));
  EXPECT_EQ(bad.value_or(9), 9);
  Result<int> good(4);
  EXPECT_EQ(good.value_or(9), 4);
  Result<std::unique_ptr<int>> moved(std::make_unique<int>(5));
  std::unique_ptr<int> p = std::move(moved).value_or(nullptr);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 5);
  Result<std::unique_ptr<int>> failed(InternalError("x"));
  EXPECT_EQ(std::move(failed).value_or(nullptr), nullptr);
}

Status ReturnIfError(Status inner, int* reached) {
  QUIVER_RETURN_IF_ERROR(inner);
  ++*reached;
  return Status();
}

TEST(StatusMacrosTest, ReturnIfErrorPassesOk) {
  int reached = 0;
  EXPECT_TRUE(ReturnIfError(Status(), &reached).ok());
  EXPECT_EQ(reached, 1);
}

TEST(StatusMacrosTest, ReturnIfErrorReturnsError) {
  int reached = 0;
  Status s = ReturnIfError(OutOfRangeError("limit"), &reached);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "limit");
  EXPECT_EQ(reached, 0);
}

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd");
  return x / 2;
}

// Two QUIVER_ASSIGN_OR_RETURN in one scope: the temporaries must not clash.
Result<int> Quarter(int x) {
  QUIVER_ASSIGN_OR_RETURN(int half, Half(x));
  QUIVER_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

Status AssignIntoExisting(int x, int* out) {
  int value = -1;
  QUIVER_ASSIGN_OR_RETURN(value, Half(x));
  *out = value;
  return Status();
}

Result<std::unique_ptr<int>> MakeBox(bool good) {
  if (!good) return ResourceExhaustedError("no memory");
  return std::make_unique<int>(9);
}

Status UnboxMoveOnly(bool good, int* out) {
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<int> box, MakeBox(good));
  *out = *box;
  return Status();
}

TEST(StatusMacrosTest, AssignOrReturn) {
  Result<int> q = Quarter(12);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q, 3);
  EXPECT_EQ(Quarter(6).status().code(), StatusCode::kInvalidArgument);  // 6 -> 3 -> odd
  EXPECT_EQ(Quarter(5).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Quarter(6).status().message(), "odd");
}

TEST(StatusMacrosTest, AssignOrReturnIntoExistingVariable) {
  int out = 0;
  EXPECT_TRUE(AssignIntoExisting(10, &out).ok());
  EXPECT_EQ(out, 5);
  out = 0;
  EXPECT_EQ(AssignIntoExisting(3, &out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out, 0);
}

TEST(StatusMacrosTest, AssignOrReturnMoveOnly) {
  int out = 0;
  EXPECT_TRUE(UnboxMoveOnly(true, &out).ok());
  EXPECT_EQ(out, 9);
  Status s = UnboxMoveOnly(false, &out);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "no memory");
}

TEST(StatusMacrosTest, IgnoreErrorCompiles) {
  NotFoundError("ignored").IgnoreError();
  SUCCEED();
}

}  // namespace
}  // namespace quiver
