// test_util::LoopSample (tests/loop_sample.h): what the sampled loops rely
// on. With as many variants as the stride, every point is tried by exactly
// one variant, whatever the residue; below `dense` every variant tries every
// point; QUIVER_EVERY_POINT=1 tries everything; QUIVER_LOOP_OFFSET repeats a
// residue.
#include "loop_sample.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace quiver::test_util {
namespace {

// Sets (or unsets) an environment variable for a scope, restoring it after:
// the soak entries run this binary with QUIVER_EVERY_POINT=1 set.
class LoopSampleScopedEnv {
 public:
  LoopSampleScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~LoopSampleScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(LoopSampleTest, StrideVariantsTryEveryPointExactlyOnceForEveryResidue) {
  LoopSampleScopedEnv every("QUIVER_EVERY_POINT", std::nullopt);
  for (std::uint64_t stride : {2u, 3u, 5u, 7u}) {
    for (std::uint64_t residue = 0; residue < stride; ++residue) {
      LoopSampleScopedEnv offset("QUIVER_LOOP_OFFSET", std::to_string(residue));
      const LoopSample sample("test loop", stride, 16);
      ASSERT_FALSE(sample.exhaustive());
      ASSERT_EQ(sample.stride(), stride);
      for (std::uint64_t n = 0; n < 1000; ++n) {
        int tried = 0;
        for (std::uint64_t variant = 0; variant < stride; ++variant) tried += sample.Tries(n, variant);
        if (n < 16) {
          EXPECT_EQ(tried, static_cast<int>(stride)) << "stride " << stride << ", point " << n;
        } else {
          EXPECT_EQ(tried, 1) << "stride " << stride << ", residue " << residue << ", point " << n;
        }
      }
    }
  }
}

TEST(LoopSampleTest, OneVariantTriesOnePointInStridePastTheDensePrefix) {
  LoopSampleScopedEnv every("QUIVER_EVERY_POINT", std::nullopt);
  LoopSampleScopedEnv offset("QUIVER_LOOP_OFFSET", "4");
  const LoopSample sample("test loop", 5, 10);
  std::uint64_t tried = 0;
  for (std::uint64_t n = 10; n < 1010; ++n) tried += sample.Tries(n);
  EXPECT_EQ(tried, 200u);
  // The residue is the one asked for: n = 14 is 4 modulo 5.
  EXPECT_TRUE(sample.Tries(14));
  EXPECT_FALSE(sample.Tries(15));
  EXPECT_NE(sample.Describe().find("QUIVER_LOOP_OFFSET=4"), std::string::npos) << sample.Describe();
}

TEST(LoopSampleTest, EveryPointTurnsSamplingOffAndNothingElseDoes) {
  {
    LoopSampleScopedEnv every("QUIVER_EVERY_POINT", "1");
    const LoopSample sample("test loop", 7);
    EXPECT_TRUE(sample.exhaustive());
    for (std::uint64_t n = 0; n < 100; ++n) EXPECT_TRUE(sample.Tries(n, n % 3));
  }
  {
    // The old knob, and any stride through the environment, change nothing:
    // a loop's stride is chosen against its structure.
    LoopSampleScopedEnv every("QUIVER_EVERY_POINT", std::nullopt);
    LoopSampleScopedEnv stride("QUIVER_LOOP_STRIDE", "4");
    const LoopSample sample("test loop", 7);
    EXPECT_EQ(sample.stride(), 7u);
  }
  {
    LoopSampleScopedEnv every("QUIVER_EVERY_POINT", std::nullopt);
    const LoopSample sample("test loop", 0);  // a stride of 0 means every point
    EXPECT_TRUE(sample.exhaustive());
  }
}

}  // namespace
}  // namespace quiver::test_util
