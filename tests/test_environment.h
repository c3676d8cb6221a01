// What tests/test_environment.cc sets for every gtest binary, and the scopes
// that undo it for the tests that need the engine's own settings.
#ifndef QUIVER_TESTS_TEST_ENVIRONMENT_H_
#define QUIVER_TESTS_TEST_ENVIRONMENT_H_

#include <cstdint>

#include "wal/wal_writer.h"

namespace quiver::test_util {

// The engine's WAL zero-fill step (WalWriter::kFillStep) for the life of
// the object, instead of the gtest binaries' 64 KiB: for tests of the fill
// itself and goldens that show segment sizes. Create it before opening a
// graph.
class ScopedEngineWalFillStep {
 public:
  ScopedEngineWalFillStep() : saved_(wal::WalWriter::FillStep()) { wal::WalWriter::SetFillStepForTesting(0); }
  ~ScopedEngineWalFillStep() { wal::WalWriter::SetFillStepForTesting(saved_); }
  ScopedEngineWalFillStep(const ScopedEngineWalFillStep&) = delete;
  ScopedEngineWalFillStep& operator=(const ScopedEngineWalFillStep&) = delete;

 private:
  const std::uint64_t saved_;
};

// The engine's WAL fragment size (wal::kMaxFragment) for the life of the
// object, instead of the gtest binaries' 64 KiB: for tests of records of
// the format's full length. Create it before opening a graph.
class ScopedEngineWalMaxFragment {
 public:
  ScopedEngineWalMaxFragment() : saved_(wal::WalWriter::MaxFragment()) {
    wal::WalWriter::SetMaxFragmentForTesting(0);
  }
  ~ScopedEngineWalMaxFragment() { wal::WalWriter::SetMaxFragmentForTesting(saved_); }
  ScopedEngineWalMaxFragment(const ScopedEngineWalMaxFragment&) = delete;
  ScopedEngineWalMaxFragment& operator=(const ScopedEngineWalMaxFragment&) = delete;

 private:
  const std::uint32_t saved_;
};

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_TEST_ENVIRONMENT_H_
