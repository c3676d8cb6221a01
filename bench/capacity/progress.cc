#include "progress.h"

#include <algorithm>
#include <cstdio>

#include "timing.h"

namespace quiver::capacity {
namespace {

std::string FormatSeconds(double s) {
  char buf[32];
  const auto total = static_cast<long>(s + 0.5);
  if (total >= 60) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", total / 60, total % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  }
  return buf;
}

}  // namespace

Progress::Progress() : start_ns_(NowNs()) {}

void Progress::Plan(std::string_view family, std::string_view step, double estimated_seconds) {
  steps_.push_back(Step{std::string(family), std::string(step), estimated_seconds});
}

void Progress::Start(std::string_view family, std::string_view step) {
  Done();
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    if (steps_[i].actual < 0 && steps_[i].family == family && steps_[i].name == step) {
      current_ = static_cast<int>(i);
      break;
    }
  }
  if (current_ < 0) {  // unplanned: track it anyway
    steps_.push_back(Step{std::string(family), std::string(step), 1.0});
    current_ = static_cast<int>(steps_.size() - 1);
  }
  step_start_ns_ = NowNs();
  Print("start");
}

void Progress::Note(std::string_view what) { Print(what); }

void Progress::Done() {
  if (current_ < 0) return;
  steps_[static_cast<std::size_t>(current_)].actual = SecondsSince(step_start_ns_);
  current_ = -1;
}

double Progress::ElapsedSeconds() const { return SecondsSince(start_ns_); }

double Progress::EstimatedTotalSeconds() const {
  double total = 0;
  for (const Step& s : steps_) total += s.estimate;
  return total;
}

double Progress::RemainingSeconds() const {
  double done_estimate = 0, done_actual = 0, left = 0;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    if (s.actual >= 0) {
      done_estimate += s.estimate;
      done_actual += s.actual;
    } else if (static_cast<int>(i) != current_) {
      left += s.estimate;
    }
  }
  const double scale = done_estimate > 1.0 ? std::clamp(done_actual / done_estimate, 0.25, 4.0) : 1.0;
  double remaining = left * scale;
  if (current_ >= 0) {
    const double current_left =
        steps_[static_cast<std::size_t>(current_)].estimate * scale - SecondsSince(step_start_ns_);
    remaining += std::max(0.0, current_left);
  }
  return remaining;
}

void Progress::Print(std::string_view what) const {
  std::string family = "-", step = "-";
  if (current_ >= 0) {
    family = steps_[static_cast<std::size_t>(current_)].family;
    step = steps_[static_cast<std::size_t>(current_)].name;
  }
  std::fprintf(stderr, "[%s] %s: %.*s  (elapsed %s, about %s left)\n", family.c_str(), step.c_str(),
               static_cast<int>(what.size()), what.data(), FormatSeconds(ElapsedSeconds()).c_str(),
               FormatSeconds(RemainingSeconds()).c_str());
}

}  // namespace quiver::capacity
