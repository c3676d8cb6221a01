// Figures and the report's "not measured" pattern.
//
// Every figure in the capacity report is either a JSON number greater than zero (it was measured)
// or the object {"value": null, "reason": "<why not>"} (it was not, or does not apply). Nothing is
// ever reported as 0 in place of "unknown": a helper that is handed a zero, negative or non-finite
// measurement turns it into the null form with a reason. The same pattern carries strings and
// booleans that could not be determined (source.commit, environment.runnerLabel).
// schemas/capacity-report.schema.json ($defs/notMeasured) states the pattern.
//
// Efficiency ratios relate a figure to the ceiling that bounds it on the same machine, measured in
// the same run: {"ceiling": "<JSON pointer into the report>", "definition": "...", "ratio": x}.
#ifndef QUIVER_BENCH_CAPACITY_FIGURE_H_
#define QUIVER_BENCH_CAPACITY_FIGURE_H_

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace quiver::capacity {

// Keeps fields in insertion order, so the report reads like its schema.
using Json = nlohmann::ordered_json;

// {"value": null, "reason": reason}.
Json NotMeasured(std::string_view reason);

// True for the {"value": null, ...} form.
bool IsNotMeasured(const Json& figure);

// `value` if finite and > 0, else NotMeasured(why_not_positive).
Json Positive(double value, std::string_view why_not_positive);

// An integer count >= 1, else NotMeasured(why_zero).
Json Count(std::uint64_t value, std::string_view why_zero);

// A measured figure, or NotMeasured(reason) when absent.
Json Optional(const std::optional<double>& value, std::string_view reason);

// The number inside a figure, if it is one.
std::optional<double> NumberOf(const Json& figure);

// How a ratio is formed from the figure and its ceiling.
enum class RatioKind {
  kFigureOverCeiling,  // rates and bandwidths: achieved / possible
  kCeilingOverFigure,  // latencies: floor / achieved
};

// {"ceiling": pointer, "definition": definition, "ratio": r}, where r follows `kind`; the ratio is
// NotMeasured (with the missing side's reason) when either side is not a number.
Json Efficiency(const Json& figure, const Json& ceiling, std::string_view pointer,
                std::string_view definition, RatioKind kind = RatioKind::kFigureOverCeiling);

// An efficiency entry with no applicable ceiling.
Json NoCeiling(std::string_view reason);

// a / b, or NotMeasured(why) when either is not a number (or the quotient is not positive).
Json Ratio(const Json& a, const Json& b, const char* why);

// One row of a family that holds each figure to a target beside a same-run ceiling (the indexes
// and import families: schema $defs/indexesRow, importRow).
struct TargetRow {
  TargetRow(const char* f, std::string v) : figure(f), variant(std::move(v)) {}
  const char* figure;
  std::string variant;
  std::uint64_t elements = 0;
  int threads = 1;
  std::uint64_t samples = 0;
  Json value;
  const char* unit = "";
  Json ceiling;
  std::string ceiling_definition;  // empty: no ceiling
  Json ratio;
  std::string ratio_definition;
  std::string target;
  // Whether the target is met, given the value and the ratio (both numbers); empty: the row has
  // no target, and targetMet says so with `no_target`.
  std::function<bool(double value, double ratio)> met;
  std::string no_target;
  Json detail = Json::object();
  // Why elements and samples are missing (a row that was not measured).
  std::string missing = "not measured";
};

Json ToJson(const TargetRow& r);

}  // namespace quiver::capacity

#endif  // QUIVER_BENCH_CAPACITY_FIGURE_H_
