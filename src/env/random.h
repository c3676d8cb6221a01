// Rng: the small seeded generator behind every random choice the simulated
// and fault-injecting file systems make.
//
// Deterministic across compilers and standard libraries (std::uniform_*
// distributions are not), so a failing crash test replays exactly from its
// seed on any machine. Not for cryptography. Not thread-safe: each user owns
// one (or guards it).
#ifndef QUIVER_ENV_RANDOM_H_
#define QUIVER_ENV_RANDOM_H_

#include <cstdint>

namespace quiver::env {

// SplitMix64 (Steele, Lea, Flood 2014): one 64-bit state, full period.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  // Seeds a generator from two values, e.g. a test seed and a file id, so
  // that the choices made for one file do not depend on how many other files
  // were visited before it.
  static Rng Derive(std::uint64_t seed, std::uint64_t stream) {
    Rng mixer(seed ^ (stream * 0xD1B54A32D192ED03ULL));
    return Rng(mixer.Next());
  }

  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n); 0 when n == 0. The modulo bias (< n / 2^64) does not
  // matter for test choices.
  std::uint64_t Uniform(std::uint64_t n) { return n == 0 ? 0 : Next() % n; }

  // True with probability 1/n; never when n == 0.
  bool OneIn(std::uint64_t n) { return n != 0 && Uniform(n) == 0; }

 private:
  std::uint64_t state_;
};

}  // namespace quiver::env

#endif  // QUIVER_ENV_RANDOM_H_
