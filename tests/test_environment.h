// What tests/test_environment.cc sets for every gtest binary, and the scopes
// that undo it for the tests that need the engine's own settings.
#ifndef QUIVER_TESTS_TEST_ENVIRONMENT_H_
#define QUIVER_TESTS_TEST_ENVIRONMENT_H_

#include <cstdint>

#include "wal/wal_writer.h"

namespace quiver::test_util {

// One of the WalWriter settings test_environment.cc changes, back at the
// engine's own value (a setter given 0 restores it) for the life of the
// object, then as it was. Create it before opening a graph.
template <typename T, T (*kGet)(), void (*kSet)(T)>
class ScopedEngineSetting {
 public:
  ScopedEngineSetting() : saved_(kGet()) { kSet(0); }
  ~ScopedEngineSetting() { kSet(saved_); }
  ScopedEngineSetting(const ScopedEngineSetting&) = delete;
  ScopedEngineSetting& operator=(const ScopedEngineSetting&) = delete;

 private:
  const T saved_;
};

// The engine's WAL zero-fill step (WalWriter::kFillStep), not 64 KiB: for
// tests of the fill itself and goldens that show segment sizes.
using ScopedEngineWalFillStep =
    ScopedEngineSetting<std::uint64_t, &wal::WalWriter::FillStep, &wal::WalWriter::SetFillStepForTesting>;
// The engine's WAL fragment size (wal::kMaxFragment), not 64 KiB: for tests
// of records of the format's full length.
using ScopedEngineWalMaxFragment = ScopedEngineSetting<std::uint32_t, &wal::WalWriter::MaxFragment,
                                                       &wal::WalWriter::SetMaxFragmentForTesting>;

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_TEST_ENVIRONMENT_H_
