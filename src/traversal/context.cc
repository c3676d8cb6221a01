// The traversal context, the budget clock, name resolution, predicates and
// edge weights: the parts every traversal call shares.
#include "traversal/context.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace quiver {

TraversalContext::TraversalContext() : impl_(std::make_unique<Impl>()) {}
TraversalContext::~TraversalContext() = default;
TraversalContext::TraversalContext(TraversalContext&&) noexcept = default;
TraversalContext& TraversalContext::operator=(TraversalContext&&) noexcept = default;

std::size_t TraversalContext::memory_bytes() const {
  const Impl& m = *impl_;
  std::size_t n = m.banned.capacity() * sizeof(std::uint32_t);
  for (const traversal::Side& s : m.sides)
    n += s.stamps.capacity() * sizeof(traversal::Stamp) + s.log.capacity() * sizeof(traversal::Mark) +
         s.dist.capacity() * sizeof(double);
  for (const auto& q : m.queue) n += q.capacity() * sizeof(std::uint64_t);
  for (const auto& h : m.heap) n += h.capacity() * sizeof(traversal::HeapEntry);
  n += m.ranked.capacity() * sizeof(traversal::RankEntry) + m.rank_words.capacity() * sizeof(std::uint64_t);
  n += m.walks.capacity() * sizeof(traversal::QueueEntry);
  return n;
}

void TraversalContext::Impl::Begin(std::uint64_t limit, int side_count, bool dist) {
  if (++generation == 0) {  // wrapped: stamps from 2^32 queries ago would look current
    for (traversal::Side& s : sides) std::fill(s.stamps.begin(), s.stamps.end(), traversal::Stamp{});
    generation = 1;
  }
  for (int i = 0; i < side_count; ++i) {
    traversal::Side& s = sides[i];
    // Each array on its own: an earlier call that ran out of memory between
    // the two may have grown one (the API answers it; the context lives on).
    if (s.stamps.size() < limit) s.stamps.resize(limit, traversal::Stamp{});
    if (s.log.size() < limit) s.log.resize(limit);
    s.marked = 0;
    if (dist && s.dist.size() < limit) s.dist.resize(limit);
  }
}

void TraversalContext::Impl::BeginPair(std::uint64_t limit) {
  if (generation > std::numeric_limits<std::uint32_t>::max() - 2) {  // two more would wrap
    for (traversal::Side& s : sides) std::fill(s.stamps.begin(), s.stamps.end(), traversal::Stamp{});
    generation = 0;
  }
  generation += 2;
  traversal::Side& s = sides[0];
  if (s.stamps.size() < limit) s.stamps.resize(limit, traversal::Stamp{});
  if (s.log.size() < limit) s.log.resize(limit);
  s.marked = 0;
}

void TraversalContext::Impl::BeginBanned(std::uint64_t limit) {
  if (++banned_generation == 0) {
    std::fill(banned.begin(), banned.end(), 0);
    banned_generation = 1;
  }
  if (banned.size() < limit) banned.resize(limit, 0);
}

void TraversalContext::Impl::ResolveTypes(const Snapshot& snap, const std::vector<std::string>& names) {
  types.all = names.empty();
  types.ids.clear();
  for (const std::string& n : names)
    if (auto t = snap.FindEdgeType(n)) types.ids.push_back(t->value());
}

void TraversalContext::Impl::ResolvePredicates(const Snapshot& snap, const std::vector<PropertyPredicate>& in,
                                               std::vector<traversal::ResolvedPredicate>* out) {
  out->clear();
  for (const PropertyPredicate& p : in) {
    traversal::ResolvedPredicate r;
    if (auto k = snap.FindPropertyKey(p.key)) r.key = k->value();
    r.op = p.op;
    r.value = &p.value;
    out->push_back(r);
  }
}

}  // namespace quiver

namespace quiver::traversal {

namespace {

const char* BudgetName(StopReason r) {
  switch (r) {
    case StopReason::kMaxVertices: return "max_vertices";
    case StopReason::kMaxEdges: return "max_edges";
    case StopReason::kDeadline: return "deadline";
    case StopReason::kCancelled: return "cancellation";
    default: return "none";
  }
}

template <typename T>
bool Compare(const T& a, const T& b, CompareOp op) {
  switch (op) {
    case CompareOp::kEq: return a == b;
    case CompareOp::kNe: return a != b;
    case CompareOp::kLt: return a < b;
    case CompareOp::kLe: return a <= b;
    case CompareOp::kGt: return a > b;
    case CompareOp::kGe: return a >= b;
  }
  return false;
}

bool IsNumber(ValueType t) { return t == ValueType::kInt64 || t == ValueType::kDouble; }

// -1, 0 or 1 as int64 `i` is below, equal to or above double `d`, exactly
// (converting `i` to double rounds above 2^53); `d` is not NaN.
int CompareExactly(std::int64_t i, double d) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (d >= kTwo63) return -1;
  if (d < -kTwo63) return 1;
  const double t = std::trunc(d);  // |t| < 2^63, or t == -2^63: an int64
  const auto ti = static_cast<std::int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  return d > t ? -1 : d < t ? 1 : 0;  // the fraction decides
}

}  // namespace

Status BudgetClock::Finish() const {
  Flush();
  StopReason r = stopped_by_;
  if (r == StopReason::kCompleted || r == StopReason::kCallback) return Status::Ok();
  return ResourceExhaustedError(std::string("traversal stopped by its ") + BudgetName(r) + " budget after " +
                                std::to_string(vertices_) + " vertices and " + std::to_string(edges_) +
                                " edges");
}

bool Evaluate(const storage::PropBlock* block, const ResolvedPredicate& p) {
  if (!p.key) return false;
  std::optional<PropertyView> v = storage::GetProperty(block, *p.key);
  if (!v) return false;
  const PropertyValue& c = *p.value;
  ValueType vt = v->type(), ct = c.type();
  if (IsNumber(vt) && IsNumber(ct)) {
    if (vt == ValueType::kInt64 && ct == ValueType::kInt64)
      return Compare(*v->as_int64(), *c.as_int64(), p.op);
    if (vt == ValueType::kDouble && ct == ValueType::kDouble)
      return Compare(*v->as_double(), *c.as_double(), p.op);
    // One of each: compared exactly, as top-K ranks them; NaN compares as a
    // double does (unequal to everything).
    const double d = vt == ValueType::kDouble ? *v->as_double() : *c.as_double();
    if (std::isnan(d)) return p.op == CompareOp::kNe;
    const int i_vs_d = CompareExactly(vt == ValueType::kInt64 ? *v->as_int64() : *c.as_int64(), d);
    return Compare(vt == ValueType::kInt64 ? i_vs_d : -i_vs_d, 0, p.op);
  }
  if (vt != ct) return false;
  if (vt == ValueType::kString) return Compare(*v->as_string(), *c.as_string(), p.op);
  if (vt == ValueType::kBool && (p.op == CompareOp::kEq || p.op == CompareOp::kNe))
    return Compare(*v->as_bool(), *c.as_bool(), p.op);
  return false;
}

const Status& TraversalOutOfMemory() {
  static const Status* const s = new Status(internal::ImmortalStatus(
      StatusCode::kResourceExhausted, "traversal: out of memory; the outputs hold nothing"));
  return *s;
}

namespace {
[[maybe_unused]] const bool traversal_out_of_memory_built = (TraversalOutOfMemory(), true);
}  // namespace

Status CheckBudget(const Budget& b) {
  if (b.max_vertices == 0)
    return InvalidArgumentError("budget max_vertices is 0 (leave it unset for no limit)");
  if (b.max_edges == 0) return InvalidArgumentError("budget max_edges is 0 (leave it unset for no limit)");
  return Status::Ok();
}

Status CheckVertex(const GraphView& view, VertexId v, const char* what) {
  if (view.Vertex(v.value()) != nullptr) return Status::Ok();
  return NotFoundError(std::string(what) + " vertex " + std::to_string(v.value()) +
                       " is not a live vertex of this snapshot");
}

Status ResolveWeight(const Snapshot& snap, const PathSpec& spec, WeightRule* rule) {
  if (!(std::isfinite(spec.default_weight) && spec.default_weight >= 0))
    return InvalidArgumentError("default_weight must be finite and >= 0");
  rule->weighted = !spec.weight_key.empty();
  rule->default_weight = rule->weighted ? spec.default_weight : 1.0;
  rule->key.reset();
  if (rule->weighted)
    if (auto k = snap.FindPropertyKey(spec.weight_key)) rule->key = k->value();
  return Status::Ok();
}

bool WeightOf(const GraphView& view, const WeightRule& rule, std::uint64_t e, double* w) {
  *w = rule.default_weight;
  if (!rule.key) return true;
  std::optional<PropertyView> v = storage::GetProperty(view.EdgeProps(e), *rule.key);
  if (!v || v->is_null()) return true;
  if (v->type() == ValueType::kInt64) {
    *w = static_cast<double>(*v->as_int64());
  } else if (v->type() == ValueType::kDouble) {
    *w = *v->as_double();
  } else {
    return false;
  }
  return *w >= 0;  // false for negative and NaN
}

Status WeightError(const GraphView& view, const WeightRule& rule, std::uint64_t e) {
  std::optional<PropertyView> v = storage::GetProperty(view.EdgeProps(e), *rule.key);
  std::string what = "edge " + std::to_string(e) + ": weight ";
  if (v->type() != ValueType::kInt64 && v->type() != ValueType::kDouble)
    return InvalidArgumentError(what + "is a " + std::string(ValueTypeName(v->type())) + ", not a number");
  return InvalidArgumentError(what + "is negative or NaN");
}

}  // namespace quiver::traversal
