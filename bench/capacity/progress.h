// Progress on stderr: which family, shape and pass runs, the time elapsed and an estimate of the
// time left. Families register their steps with an estimate before anything runs; the estimate of
// what is left is scaled by how the finished steps compared with their own estimates, so it
// corrects itself on a slower or faster machine.
#ifndef QUIVER_BENCH_CAPACITY_PROGRESS_H_
#define QUIVER_BENCH_CAPACITY_PROGRESS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace quiver::capacity {

class Progress {
 public:
  Progress();
  // Registers a step (in run order) with its estimated duration.
  void Plan(std::string_view family, std::string_view step, double estimated_seconds);
  // Finishes the current step and starts (family, step), which should have been planned.
  void Start(std::string_view family, std::string_view step);
  // Prints one line about the current step, e.g. "pass 3/10".
  void Note(std::string_view what);
  // Finishes the current step.
  void Done();
  double ElapsedSeconds() const;
  double EstimatedTotalSeconds() const;

 private:
  struct Step {
    std::string family;
    std::string name;
    double estimate = 0;
    double actual = -1;  // < 0 until finished
  };
  double RemainingSeconds() const;
  void Print(std::string_view what) const;

  std::uint64_t start_ns_;
  std::uint64_t step_start_ns_ = 0;
  std::vector<Step> steps_;
  int current_ = -1;
};

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_PROGRESS_H_
