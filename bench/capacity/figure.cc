#include "figure.h"

#include <cmath>
#include <cstdint>

namespace quiver::capacity {

Json NotMeasured(std::string_view reason) {
  Json j;
  j["value"] = nullptr;
  j["reason"] = std::string(reason.empty() ? "not measured" : reason);
  return j;
}

bool IsNotMeasured(const Json& figure) {
  return figure.is_object() && figure.contains("value") && figure["value"].is_null();
}

Json Positive(double value, std::string_view why_not_positive) {
  if (!std::isfinite(value) || value <= 0) return NotMeasured(why_not_positive);
  return value;
}

Json Count(std::uint64_t value, std::string_view why_zero) {
  if (value == 0) return NotMeasured(why_zero);
  return value;
}

Json Optional(const std::optional<double>& value, std::string_view reason) {
  if (!value) return NotMeasured(reason);
  return Positive(*value, reason);
}

std::optional<double> NumberOf(const Json& figure) {
  if (figure.is_number()) return figure.get<double>();
  return std::nullopt;
}

Json Efficiency(const Json& figure, const Json& ceiling, std::string_view pointer,
                std::string_view definition, RatioKind kind) {
  Json e;
  e["ceiling"] = std::string(pointer);
  e["definition"] = std::string(definition);
  const std::optional<double> f = NumberOf(figure);
  const std::optional<double> c = NumberOf(ceiling);
  if (!f) {
    e["ratio"] = NotMeasured("the figure was not measured");
  } else if (!c) {
    std::string why = "the ceiling was not measured";
    if (IsNotMeasured(ceiling)) why += ": " + ceiling["reason"].get<std::string>();
    e["ratio"] = NotMeasured(why);
  } else {
    const double r = kind == RatioKind::kFigureOverCeiling ? *f / *c : *c / *f;
    e["ratio"] = Positive(r, "the ratio is not a positive number");
  }
  return e;
}

Json NoCeiling(std::string_view reason) {
  Json e;
  e["ceiling"] = nullptr;
  e["definition"] = nullptr;
  e["ratio"] = NotMeasured(reason);
  return e;
}

Json Ratio(const Json& a, const Json& b, const char* why) {
  const std::optional<double> x = NumberOf(a), y = NumberOf(b);
  if (!x || !y) return NotMeasured(why);
  return Positive(*x / *y, why);
}

Json ToJson(const TargetRow& r) {
  Json j;
  j["figure"] = r.figure;
  j["variant"] = r.variant;
  j["elements"] = Count(r.elements, r.missing);
  j["threads"] = r.threads;
  j["samples"] = Count(r.samples, r.missing);
  j["value"] = r.value;
  j["unit"] = r.unit;
  j["ceiling"] = r.ceiling;
  j["ceilingDefinition"] = r.ceiling_definition.empty() ? Json() : Json(r.ceiling_definition);
  j["ratio"] = r.ratio;
  j["ratioDefinition"] = r.ratio_definition;
  j["target"] = r.target;
  const std::optional<double> v = NumberOf(r.value), q = NumberOf(r.ratio);
  if (!r.met) {
    j["targetMet"] = NotMeasured(r.no_target);
  } else if (v && q) {
    j["targetMet"] = r.met(*v, *q);
  } else {
    j["targetMet"] = NotMeasured(v ? "the ratio was not measured" : "the figure was not measured");
  }
  if (!r.detail.empty()) j["detail"] = r.detail;
  return j;
}

}  // namespace quiver::capacity
