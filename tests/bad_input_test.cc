// Bad input through the public write API (RELIABILITY.md 3.10), table-driven.
//
// Every row builds one batch against a small base graph and names the exact
// status code the batch must fail with. Each row runs on a fresh graph in
// three submission modes (Write, WriteAsync, and WriteAsync between two valid
// batches so they may share a commit group) and checks: the code matches, the
// message is non-empty, the graph is structurally unchanged (sequence, counts,
// id limits, every element, and that no name the batch introduced became
// visible), and a following valid batch commits. Valid operations are mixed in
// before and after the bad one so a partial apply would show.
//
// A second test checks the boundary values that must be accepted.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <future>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "quiver/graph.h"
#include "test_util.h"

namespace quiver {
namespace {

using test_util::Dump;
using test_util::SameValue;

// Small limits so every bound is cheap to cross.
constexpr std::size_t kMaxString = 64;
constexpr std::size_t kMaxDims = 8;
constexpr std::size_t kMaxListElements = 4;
constexpr std::size_t kMaxOps = 64;
constexpr std::size_t kMaxProps = 6;
// Property bytes: 8 per element, 16 per property, payloads rounded up to 8.
// The base graph's fullest element takes 8 + 6 * 16 = 104.
constexpr std::size_t kMaxPropBytes = 200;
// Edges per vertex and direction. The base graph's vertex a has 3 out-edges
// and 1 in-edge.
constexpr std::size_t kMaxDegree = 8;

Options TestOptions() {
  Options o;
  o.limits.max_string_bytes = kMaxString;
  o.limits.max_vector_dims = kMaxDims;
  o.limits.max_list_elements = kMaxListElements;
  o.limits.max_batch_ops = kMaxOps;
  o.limits.max_properties_per_element = kMaxProps;
  o.limits.max_property_bytes_per_element = kMaxPropBytes;
  o.limits.max_degree = kMaxDegree;
  return o;
}

// Ids in the base graph.
struct Ctx {
  VertexId a, b, c;     // live; b has exactly one property
  VertexId full;        // live, exactly kMaxProps properties
  VertexId removed_v;   // removed by an earlier batch
  EdgeId ab, loop, bc;  // live: a->b, a->a, b->c
  EdgeId full_edge;     // live a->c with exactly kMaxProps properties
  EdgeId removed_e;     // removed by an earlier batch
  VertexId unknown_v{1000};
  EdgeId unknown_e{1000};
};

std::vector<Property> NProps(std::size_t n, const std::string& prefix = "k") {
  std::vector<Property> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back({prefix + std::to_string(i), static_cast<std::int64_t>(i)});
  return out;
}

// Builds the base graph and fills `ctx`. Sequence 2 afterwards.
std::unique_ptr<Graph> MakeBaseGraph(Ctx* ctx) {
  Result<std::unique_ptr<Graph>> opened = Graph::OpenInMemory(TestOptions());
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  if (!opened.ok()) return nullptr;
  std::unique_ptr<Graph> g = std::move(opened).value();
  WriteBatch b1;
  NewVertex a = b1.AddVertex("Person", {{"name", "a"}, {"age", 30}});
  NewVertex b = b1.AddVertex("Person", {{"name", "b"}});
  NewVertex c = b1.AddVertex("City", {{"name", "c"}, {"pop", 1.5}});
  NewVertex r = b1.AddVertex("Person");
  b1.AddVertex("Full", NProps(kMaxProps));
  b1.AddEdge("KNOWS", a, b, {{"w", 1.0}});
  b1.AddEdge("SELF", a, a);
  b1.AddEdge("LIVES_IN", b, c, {{"since", 2001}});
  b1.AddEdge("KNOWS", a, r);
  b1.AddEdge("KNOWS", b, a, {{"gone", true}});
  b1.AddEdge("FULL", a, c, NProps(kMaxProps));
  Result<CommitInfo> i1 = g->Write(std::move(b1));
  EXPECT_TRUE(i1.ok()) << i1.status().ToString();
  if (!i1.ok()) return nullptr;
  ctx->a = i1->vertices[0];
  ctx->b = i1->vertices[1];
  ctx->c = i1->vertices[2];
  ctx->removed_v = i1->vertices[3];
  ctx->full = i1->vertices[4];
  ctx->ab = i1->edges[0];
  ctx->loop = i1->edges[1];
  ctx->bc = i1->edges[2];
  ctx->removed_e = i1->edges[4];
  ctx->full_edge = i1->edges[5];
  WriteBatch b2;
  b2.RemoveVertex(ctx->removed_v);  // also removes edge 3
  b2.RemoveEdge(ctx->removed_e);
  Result<CommitInfo> i2 = g->Write(std::move(b2));
  EXPECT_TRUE(i2.ok()) << i2.status().ToString();
  if (!i2.ok()) return nullptr;
  return g;
}

// Names that bad batches introduce through their valid operations; none may
// become visible when the batch fails.
const std::vector<std::string> kProbeNames = {"Novel", "Novel2", "NOVEL_T", "novel_key", "novel_key2",
                                              "Bad",   "BAD_T",  "bad_key", "x",         "k6"};

// Valid operations placed around the bad one.
void NoiseBefore(WriteBatch& b, const Ctx& ctx) {
  NewVertex n = b.AddVertex("Novel", {{"novel_key", 1}});
  b.AddEdge("NOVEL_T", n, ctx.a);
  b.SetProperty(ctx.c, "name", "changed");
  b.SetProperty(ctx.ab, "w", 5.0);
}
void NoiseAfter(WriteBatch& b, const Ctx& ctx) {
  b.AddVertex("Novel2");
  b.SetProperty(ctx.loop, "novel_key2", 2);
  b.RemoveProperty(ctx.a, "age");
  b.RemoveEdge(ctx.bc);
}

struct Case {
  std::string name;
  std::function<void(WriteBatch&, const Ctx&)> build;
  StatusCode code;
  bool noise = true;         // wrap the bad operation in valid ones
  bool close_first = false;  // close the graph before writing
  bool noise_before = true;  // false: the row replaces the batch it is given
};

void AddUtf8Cases(std::vector<Case>& cases) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"lone_continuation", "a\x80z"},
      {"overlong_c0_80", "a\xC0\x80z"},
      {"surrogate_ed_a0_80", "a\xED\xA0\x80z"},
      {"above_10ffff", "a\xF4\x90\x80\x80z"},
      {"truncated_at_end", "ab\xE2\x82"},
      {"truncated_mid", "a\xE2\x82z"},
      {"five_byte_form", "a\xF8\x88\x80\x80\x80z"},
      {"byte_ff", "\xFF"},
      {"overlong_c1_bf", "\xC1\xBF"},
      {"overlong_3byte", "\xE0\x80\xAF"},
      {"overlong_4byte", "\xF0\x82\x82\xAC"},
      {"low_surrogate", "\xED\xBF\xBF"},
      {"truncated_2byte", "\xC2"},
      {"continuation_after_valid", "\xC3\xA9\x80"},
  };
  for (const auto& entry : bad) {
    const std::string what = entry.first;
    const std::string str = entry.second;
    auto add = [&](const std::string& where, std::function<void(WriteBatch&, const Ctx&)> build) {
      cases.push_back({"utf8_" + what + "_in_" + where, std::move(build), StatusCode::kInvalidArgument});
    };
    add("label", [str](WriteBatch& b, const Ctx&) { b.AddVertex(str); });
    add("label_with_props", [str](WriteBatch& b, const Ctx&) { b.AddVertex(str, {{"bad_key", 1}}); });
    add("edge_type", [str](WriteBatch& b, const Ctx& c) { b.AddEdge(str, c.a, c.b); });
    add("key_add_vertex", [str](WriteBatch& b, const Ctx&) { b.AddVertex("Bad", {{"x", 1}, {str, 2}}); });
    add("key_add_edge", [str](WriteBatch& b, const Ctx& c) { b.AddEdge("BAD_T", c.a, c.b, {{str, 2}}); });
    add("key_set_vertex", [str](WriteBatch& b, const Ctx& c) { b.SetProperty(c.a, str, 1); });
    add("key_set_edge", [str](WriteBatch& b, const Ctx& c) { b.SetProperty(c.ab, str, 1); });
    add("key_remove_vertex", [str](WriteBatch& b, const Ctx& c) { b.RemoveProperty(c.a, str); });
    add("key_remove_edge", [str](WriteBatch& b, const Ctx& c) { b.RemoveProperty(c.ab, str); });
    add("value_add_vertex", [str](WriteBatch& b, const Ctx&) { b.AddVertex("Bad", {{"bad_key", str}}); });
    add("value_add_edge", [str](WriteBatch& b, const Ctx& c) {
      b.AddEdge("BAD_T", c.b, c.a, {{"bad_key", str}});
    });
    add("value_set_vertex", [str](WriteBatch& b, const Ctx& c) { b.SetProperty(c.b, "bad_key", str); });
    add("value_set_edge", [str](WriteBatch& b, const Ctx& c) { b.SetProperty(c.bc, "bad_key", str); });
    add("value_set_new_vertex", [str](WriteBatch& b, const Ctx&) {
      NewVertex v = b.AddVertex("Bad");
      b.SetProperty(v, "bad_key", str);
    });
    // In any element of a string list.
    add("list_add_vertex", [str](WriteBatch& b, const Ctx&) {
      b.AddVertex("Bad", {{"bad_key", StringList{"ok", str}}});
    });
    add("list_add_edge", [str](WriteBatch& b, const Ctx& c) {
      b.AddEdge("BAD_T", c.b, c.a, {{"bad_key", StringList{str}}});
    });
    add("list_set_vertex", [str](WriteBatch& b, const Ctx& c) {
      b.SetProperty(c.b, "bad_key", StringList{str, "", "ok"});
    });
    add("list_set_edge", [str](WriteBatch& b, const Ctx& c) {
      b.SetProperty(c.bc, "bad_key", StringList{"", str});
    });
  }
}

void AddEmptyNameCases(std::vector<Case>& cases) {
  const StatusCode kIA = StatusCode::kInvalidArgument;
  cases.push_back({"empty_label", [](WriteBatch& b, const Ctx&) { b.AddVertex(""); }, kIA});
  cases.push_back({"empty_edge_type", [](WriteBatch& b, const Ctx& c) { b.AddEdge("", c.a, c.b); }, kIA});
  cases.push_back({"empty_key_add_vertex",
                   [](WriteBatch& b, const Ctx&) {
                     b.AddVertex("Bad", {{"", 1}});
                   },
                   kIA});
  cases.push_back({"empty_key_add_edge",
                   [](WriteBatch& b, const Ctx& c) {
                     b.AddEdge("BAD_T", c.a, c.a, {{"", 1}});
                   },
                   kIA});
  cases.push_back(
      {"empty_key_set_vertex", [](WriteBatch& b, const Ctx& c) { b.SetProperty(c.a, "", 1); }, kIA});
  cases.push_back(
      {"empty_key_set_edge", [](WriteBatch& b, const Ctx& c) { b.SetProperty(c.ab, "", 1); }, kIA});
  cases.push_back(
      {"empty_key_remove_vertex", [](WriteBatch& b, const Ctx& c) { b.RemoveProperty(c.a, ""); }, kIA});
  cases.push_back(
      {"empty_key_remove_edge", [](WriteBatch& b, const Ctx& c) { b.RemoveProperty(c.ab, ""); }, kIA});
}

void AddNonFiniteCases(std::vector<Case>& cases) {
  const std::vector<std::pair<std::string, double>> bad = {
      {"nan", std::numeric_limits<double>::quiet_NaN()},
      {"neg_nan", -std::numeric_limits<double>::quiet_NaN()},
      {"signaling_nan", std::numeric_limits<double>::signaling_NaN()},
      {"pos_inf", std::numeric_limits<double>::infinity()},
      {"neg_inf", -std::numeric_limits<double>::infinity()},
  };
  for (const auto& entry : bad) {
    const std::string what = entry.first;
    const double x = entry.second;
    const float f = static_cast<float>(x);
    auto add = [&](const std::string& where, std::function<void(WriteBatch&, const Ctx&)> build) {
      cases.push_back({what + "_" + where, std::move(build), StatusCode::kInvalidArgument});
    };
    add("double_add_vertex", [x](WriteBatch& b, const Ctx&) { b.AddVertex("Bad", {{"bad_key", x}}); });
    add("double_add_edge", [x](WriteBatch& b, const Ctx& c) {
      b.AddEdge("BAD_T", c.a, c.b, {{"bad_key", x}});
    });
    add("double_set_vertex", [x](WriteBatch& b, const Ctx& c) { b.SetProperty(c.a, "bad_key", x); });
    add("double_set_edge", [x](WriteBatch& b, const Ctx& c) { b.SetProperty(c.ab, "w", x); });
    add("vector_add_vertex", [f](WriteBatch& b, const Ctx&) {
      b.AddVertex("Bad", {{"bad_key", FloatVector{1.0f, f, 2.0f}}});
    });
    add("vector_set_vertex",
        [f](WriteBatch& b, const Ctx& c) { b.SetProperty(c.a, "bad_key", FloatVector{f}); });
    add("vector_set_edge", [f](WriteBatch& b, const Ctx& c) {
      b.SetProperty(c.loop, "bad_key", FloatVector{0.0f, 0.0f, f});
    });
    add("vector_add_edge", [f](WriteBatch& b, const Ctx& c) {
      b.AddEdge("BAD_T", c.a, c.a, {{"bad_key", FloatVector{f}}});
    });
  }
}

void AddLimitCases(std::vector<Case>& cases) {
  const StatusCode kOOR = StatusCode::kOutOfRange;
  const std::string long_str(kMaxString + 1, 's');
  std::string long_multibyte;  // 65 bytes, 33 characters
  while (long_multibyte.size() + 2 <= kMaxString + 1) long_multibyte += "\xC3\xA9";
  while (long_multibyte.size() < kMaxString + 1) long_multibyte += "a";
  const Bytes long_bytes(kMaxString + 1, std::byte{0x41});
  const FloatVector long_vec(kMaxDims + 1, 0.5f);

  cases.push_back({"long_string_add_vertex",
                   [long_str](WriteBatch& b, const Ctx&) {
                     b.AddVertex("Bad", {{"bad_key", long_str}});
                   },
                   kOOR});
  cases.push_back({"long_string_set_vertex",
                   [long_str](WriteBatch& b, const Ctx& c) { b.SetProperty(c.a, "bad_key", long_str); },
                   kOOR});
  cases.push_back({"long_string_set_edge",
                   [long_str](WriteBatch& b, const Ctx& c) { b.SetProperty(c.ab, "bad_key", long_str); },
                   kOOR});
  cases.push_back({"long_string_add_edge",
                   [long_str](WriteBatch& b, const Ctx& c) {
                     b.AddEdge("BAD_T", c.a, c.b, {{"bad_key", long_str}});
                   },
                   kOOR});
  cases.push_back(
      {"long_multibyte_string_set_vertex",
       [long_multibyte](WriteBatch& b, const Ctx& c) { b.SetProperty(c.a, "bad_key", long_multibyte); },
       kOOR});
  cases.push_back({"long_bytes_add_vertex",
                   [long_bytes](WriteBatch& b, const Ctx&) {
                     b.AddVertex("Bad", {{"bad_key", long_bytes}});
                   },
                   kOOR});
  cases.push_back({"long_bytes_set_edge",
                   [long_bytes](WriteBatch& b, const Ctx& c) { b.SetProperty(c.ab, "bad_key", long_bytes); },
                   kOOR});
  cases.push_back({"long_label", [long_str](WriteBatch& b, const Ctx&) { b.AddVertex(long_str); }, kOOR});
  cases.push_back(
      {"long_edge_type", [long_str](WriteBatch& b, const Ctx& c) { b.AddEdge(long_str, c.a, c.b); }, kOOR});
  cases.push_back({"long_key_add_vertex",
                   [long_str](WriteBatch& b, const Ctx&) {
                     b.AddVertex("Bad", {{long_str, 1}});
                   },
                   kOOR});
  cases.push_back({"long_key_set_vertex",
                   [long_str](WriteBatch& b, const Ctx& c) { b.SetProperty(c.a, long_str, 1); }, kOOR});
  cases.push_back({"long_key_set_edge",
                   [long_str](WriteBatch& b, const Ctx& c) { b.SetProperty(c.ab, long_str, 1); }, kOOR});
  cases.push_back({"long_key_remove_vertex",
                   [long_str](WriteBatch& b, const Ctx& c) { b.RemoveProperty(c.a, long_str); }, kOOR});
  cases.push_back({"long_vector_add_vertex",
                   [long_vec](WriteBatch& b, const Ctx&) {
                     b.AddVertex("Bad", {{"bad_key", long_vec}});
                   },
                   kOOR});
  cases.push_back({"long_vector_set_edge",
                   [long_vec](WriteBatch& b, const Ctx& c) { b.SetProperty(c.ab, "bad_key", long_vec); },
                   kOOR});

  // Batch size: each op counts one, each property of an add one more.
  cases.push_back({"too_many_ops_plain",
                   [](WriteBatch& b, const Ctx& c) {
                     for (std::size_t i = 0; i < kMaxOps + 1; ++i)
                       b.SetProperty(c.a, "x", static_cast<int>(i));
                   },
                   kOOR, /*noise=*/false});
  cases.push_back({"too_many_ops_adds",
                   [](WriteBatch& b, const Ctx&) {
                     for (std::size_t i = 0; i < kMaxOps + 1; ++i) b.AddVertex("Bad");
                   },
                   kOOR, /*noise=*/false});
  cases.push_back({"too_many_ops_counting_properties",
                   [](WriteBatch& b, const Ctx& c) {
                     // 16 adds with 3 properties each = 64 ops; one more op is 65.
                     for (std::size_t i = 0; i < kMaxOps / 4; ++i) b.AddVertex("Bad", NProps(3));
                     b.RemoveProperty(c.a, "age");
                   },
                   kOOR, /*noise=*/false});
  cases.push_back({"too_many_ops_counting_edge_properties",
                   [](WriteBatch& b, const Ctx& c) {
                     for (std::size_t i = 0; i < kMaxOps / 2; ++i) b.AddEdge("BAD_T", c.a, c.b, {{"x", 1}});
                     b.RemoveProperty(c.a, "age");
                   },
                   kOOR, /*noise=*/false});

  // Properties per element, counted after the batch.
  cases.push_back({"too_many_props_add_vertex",
                   [](WriteBatch& b, const Ctx&) { b.AddVertex("Bad", NProps(kMaxProps + 1)); }, kOOR});
  cases.push_back({"too_many_props_add_edge",
                   [](WriteBatch& b, const Ctx& c) { b.AddEdge("BAD_T", c.a, c.b, NProps(kMaxProps + 1)); },
                   kOOR});
  cases.push_back({"too_many_props_set_on_full_vertex",
                   [](WriteBatch& b, const Ctx& c) { b.SetProperty(c.full, "bad_key", 1); }, kOOR});
  cases.push_back({"too_many_props_set_on_full_edge",
                   [](WriteBatch& b, const Ctx& c) { b.SetProperty(c.full_edge, "bad_key", 1); }, kOOR});
  cases.push_back({"too_many_props_set_on_new_vertex",
                   [](WriteBatch& b, const Ctx&) {
                     NewVertex v = b.AddVertex("Bad", NProps(kMaxProps));
                     b.SetProperty(v, "bad_key", 1);
                   },
                   kOOR});
  cases.push_back({"too_many_props_set_on_new_edge",
                   [](WriteBatch& b, const Ctx& c) {
                     NewEdge e = b.AddEdge("BAD_T", c.a, c.b, NProps(kMaxProps));
                     b.SetProperty(e, "bad_key", 1);
                   },
                   kOOR});
  cases.push_back({"too_many_props_by_sets",
                   [](WriteBatch& b, const Ctx& c) {
                     // b has one property; six new keys make seven.
                     for (std::size_t i = 0; i < kMaxProps; ++i)
                       b.SetProperty(c.b, "k" + std::to_string(i), 1);
                   },
                   kOOR, /*noise=*/false});
}

// Limits::max_property_bytes_per_element, counted after the batch. A string
// of kMaxString (64) bytes takes an entry of 80.
void AddPropertyBytesCases(std::vector<Case>& cases) {
  const StatusCode kOOR = StatusCode::kOutOfRange;
  const std::string s64(kMaxString, 'p');
  auto three_big = [s64] { return std::vector<Property>{{"s1", s64}, {"s2", s64}, {"s3", s64}}; };  // 248
  cases.push_back({"prop_bytes_add_vertex",
                   [three_big](WriteBatch& b, const Ctx&) { b.AddVertex("Bad", three_big()); }, kOOR});
  cases.push_back({"prop_bytes_add_edge",
                   [three_big](WriteBatch& b, const Ctx& c) { b.AddEdge("BAD_T", c.a, c.b, three_big()); },
                   kOOR});
  cases.push_back({"prop_bytes_sets_on_vertex",
                   [s64](WriteBatch& b, const Ctx& c) {
                     for (const char* k : {"x", "bad_key", "novel_key"}) b.SetProperty(c.a, k, s64);
                   },
                   kOOR});
  cases.push_back({"prop_bytes_sets_on_edge",
                   [s64](WriteBatch& b, const Ctx& c) {
                     for (const char* k : {"x", "bad_key", "novel_key"}) b.SetProperty(c.ab, k, s64);
                   },
                   kOOR});
  // The count stays at the limit; replacing ints by strings grows the bytes.
  cases.push_back({"prop_bytes_replacing_values_on_full_vertex",
                   [s64](WriteBatch& b, const Ctx& c) {
                     b.SetProperty(c.full, "k0", s64);  // 168
                     b.SetProperty(c.full, "k1", s64);  // 232
                   },
                   kOOR});
  cases.push_back({"prop_bytes_set_on_new_vertex",
                   [s64](WriteBatch& b, const Ctx&) {
                     NewVertex v = b.AddVertex("Bad", {{"s1", s64}, {"s2", s64}});
                     b.SetProperty(v, "bad_key", s64);
                   },
                   kOOR});
  cases.push_back({"prop_bytes_set_on_new_edge",
                   [s64](WriteBatch& b, const Ctx& c) {
                     NewEdge e = b.AddEdge("BAD_T", c.a, c.b, {{"s1", s64}, {"s2", s64}});
                     b.SetProperty(e, "bad_key", s64);
                   },
                   kOOR});
}

// A string list: Limits::max_list_elements, max_string_bytes per element,
// and the list as a whole within max_property_bytes_per_element.
void AddStringListLimitCases(std::vector<Case>& cases) {
  const StatusCode kOOR = StatusCode::kOutOfRange;
  const StringList too_many(kMaxListElements + 1, "t");
  const StringList long_element = {"ok", std::string(kMaxString + 1, 'e')};
  // 4 + 4 * 4 + 4 * 60 = 260 packed bytes: each element and the count
  // within their limits, the list over kMaxPropBytes.
  const StringList too_big(kMaxListElements, std::string(60, 'b'));
  cases.push_back({"list_too_many_elements_add_vertex",
                   [too_many](WriteBatch& b, const Ctx&) {
                     b.AddVertex("Bad", {{"bad_key", too_many}});
                   },
                   kOOR});
  cases.push_back({"list_too_many_elements_set_edge",
                   [too_many](WriteBatch& b, const Ctx& c) { b.SetProperty(c.ab, "bad_key", too_many); },
                   kOOR});
  cases.push_back(
      {"list_long_element_set_vertex",
       [long_element](WriteBatch& b, const Ctx& c) { b.SetProperty(c.a, "bad_key", long_element); }, kOOR});
  cases.push_back({"list_long_element_add_edge",
                   [long_element](WriteBatch& b, const Ctx& c) {
                     b.AddEdge("BAD_T", c.a, c.b, {{"bad_key", long_element}});
                   },
                   kOOR});
  cases.push_back({"list_too_big_set_vertex",
                   [too_big](WriteBatch& b, const Ctx& c) { b.SetProperty(c.a, "bad_key", too_big); }, kOOR});
  cases.push_back({"list_too_big_add_vertex",
                   [too_big](WriteBatch& b, const Ctx&) {
                     b.AddVertex("Bad", {{"bad_key", too_big}});
                   },
                   kOOR});
}

// Limits::max_degree: degree before the batch plus the edges it adds.
void AddDegreeCases(std::vector<Case>& cases) {
  const StatusCode kOOR = StatusCode::kOutOfRange;
  cases.push_back({"degree_out_of_committed_vertex",
                   [](WriteBatch& b, const Ctx& c) {
                     for (int i = 0; i < 6; ++i) b.AddEdge("BAD_T", c.a, c.b);  // 3 + 6
                   },
                   kOOR});
  cases.push_back({"degree_in_of_committed_vertex",
                   [](WriteBatch& b, const Ctx& c) {
                     for (int i = 0; i < 8; ++i) b.AddEdge("BAD_T", c.b, c.a);  // 1 (+ 1 noise) + 8
                   },
                   kOOR});
  cases.push_back({"degree_of_new_vertex",
                   [](WriteBatch& b, const Ctx& c) {
                     NewVertex v = b.AddVertex("Bad");
                     for (std::size_t i = 0; i < kMaxDegree + 1; ++i)
                       b.AddEdge("BAD_T", v, i % 2 ? c.b : c.c);
                   },
                   kOOR});
  cases.push_back({"degree_in_by_self_loops",
                   [](WriteBatch& b, const Ctx& c) {
                     for (int i = 0; i < 7; ++i) b.AddEdge("BAD_T", c.c, c.c);  // out 7, in 2 + 7
                   },
                   kOOR});
  cases.push_back({"degree_removals_are_not_credited",
                   [](WriteBatch& b, const Ctx& c) {
                     b.RemoveEdge(c.ab);
                     for (int i = 0; i < 6; ++i) b.AddEdge("BAD_T", c.a, c.c);  // 3 + 6, though 8 after
                   },
                   kOOR, /*noise=*/false});
}

void AddNotFoundCases(std::vector<Case>& cases) {
  const StatusCode kNF = StatusCode::kNotFound;
  auto add = [&](std::string name, std::function<void(WriteBatch&, const Ctx&)> build) {
    cases.push_back({std::move(name), std::move(build), kNF});
  };
  // Edge endpoints.
  add("edge_from_unknown_vertex", [](WriteBatch& b, const Ctx& c) { b.AddEdge("BAD_T", c.unknown_v, c.a); });
  add("edge_to_unknown_vertex", [](WriteBatch& b, const Ctx& c) { b.AddEdge("BAD_T", c.a, c.unknown_v); });
  add("edge_from_removed_vertex", [](WriteBatch& b, const Ctx& c) { b.AddEdge("BAD_T", c.removed_v, c.a); });
  add("edge_to_removed_vertex", [](WriteBatch& b, const Ctx& c) { b.AddEdge("BAD_T", c.b, c.removed_v); });
  add("edge_to_max_id",
      [](WriteBatch& b, const Ctx& c) { b.AddEdge("BAD_T", c.a, VertexId(kMaxElementId)); });
  add("edge_to_uint64_max",
      [](WriteBatch& b, const Ctx& c) { b.AddEdge("BAD_T", c.a, VertexId(~std::uint64_t{0})); });
  // Past the id limit and past every id this batch or the grouped-mode
  // batches around it could be assigned.
  add("edge_to_unassigned_id_past_the_limit",
      [](WriteBatch& b, const Ctx& c) { b.AddEdge("BAD_T", c.a, VertexId(c.full.value() + 10)); });
  add("edge_endpoint_removed_earlier_in_batch", [](WriteBatch& b, const Ctx& c) {
    b.RemoveVertex(c.b);
    b.AddEdge("BAD_T", c.a, c.b);
  });
  add("self_loop_on_vertex_removed_earlier_in_batch", [](WriteBatch& b, const Ctx& c) {
    b.RemoveVertex(c.c);
    b.AddEdge("BAD_T", c.c, c.c);
  });
  add("edge_endpoint_new_vertex_removed_earlier_in_batch", [](WriteBatch& b, const Ctx& c) {
    NewVertex v = b.AddVertex("Bad");
    b.RemoveVertex(v);
    b.AddEdge("BAD_T", v, c.a);
  });
  // Property operations on dead elements.
  add("set_on_removed_vertex", [](WriteBatch& b, const Ctx& c) { b.SetProperty(c.removed_v, "x", 1); });
  add("set_on_unknown_vertex", [](WriteBatch& b, const Ctx& c) { b.SetProperty(c.unknown_v, "x", 1); });
  add("set_on_vertex_removed_earlier_in_batch", [](WriteBatch& b, const Ctx& c) {
    b.RemoveVertex(c.b);
    b.SetProperty(c.b, "x", 1);
  });
  add("set_on_new_vertex_removed_earlier_in_batch", [](WriteBatch& b, const Ctx&) {
    NewVertex v = b.AddVertex("Bad");
    b.RemoveVertex(v);
    b.SetProperty(v, "x", 1);
  });
  add("set_on_removed_edge", [](WriteBatch& b, const Ctx& c) { b.SetProperty(c.removed_e, "x", 1); });
  add("set_on_unknown_edge", [](WriteBatch& b, const Ctx& c) { b.SetProperty(c.unknown_e, "x", 1); });
  add("set_on_edge_removed_earlier_in_batch", [](WriteBatch& b, const Ctx& c) {
    b.RemoveEdge(c.ab);
    b.SetProperty(c.ab, "x", 1);
  });
  add("set_on_edge_whose_endpoint_was_removed", [](WriteBatch& b, const Ctx& c) {
    b.RemoveVertex(c.c);
    b.SetProperty(c.bc, "x", 1);
  });
  add("set_on_new_edge_whose_endpoint_was_removed", [](WriteBatch& b, const Ctx& c) {
    NewEdge e = b.AddEdge("BAD_T", c.a, c.b);
    b.RemoveVertex(c.b);
    b.SetProperty(e, "x", 1);
  });
  add("remove_property_on_removed_vertex",
      [](WriteBatch& b, const Ctx& c) { b.RemoveProperty(c.removed_v, "name"); });
  add("remove_property_on_unknown_vertex",
      [](WriteBatch& b, const Ctx& c) { b.RemoveProperty(c.unknown_v, "name"); });
  add("remove_property_on_removed_edge",
      [](WriteBatch& b, const Ctx& c) { b.RemoveProperty(c.removed_e, "gone"); });
  add("remove_property_on_unknown_edge",
      [](WriteBatch& b, const Ctx& c) { b.RemoveProperty(c.unknown_e, "w"); });
  // Edge removal.
  add("remove_unknown_edge", [](WriteBatch& b, const Ctx& c) { b.RemoveEdge(c.unknown_e); });
  add("remove_removed_edge", [](WriteBatch& b, const Ctx& c) { b.RemoveEdge(c.removed_e); });
  add("remove_edge_of_removed_vertex_from_earlier_batch", [](WriteBatch& b, const Ctx&) {
    b.RemoveEdge(EdgeId(3));  // a->removed_v, removed with its endpoint
  });
  add("remove_edge_twice", [](WriteBatch& b, const Ctx& c) {
    b.RemoveEdge(c.ab);
    b.RemoveEdge(c.ab);
  });
  add("remove_new_edge_twice", [](WriteBatch& b, const Ctx& c) {
    NewEdge e = b.AddEdge("BAD_T", c.a, c.b);
    b.RemoveEdge(e);
    b.RemoveEdge(e);
  });
  add("remove_edge_after_its_source_was_removed", [](WriteBatch& b, const Ctx& c) {
    b.RemoveVertex(c.a);
    b.RemoveEdge(c.ab);
  });
  add("remove_edge_after_its_target_was_removed", [](WriteBatch& b, const Ctx& c) {
    b.RemoveVertex(c.b);
    b.RemoveEdge(c.ab);
  });
  add("remove_self_loop_after_its_vertex_was_removed", [](WriteBatch& b, const Ctx& c) {
    b.RemoveVertex(c.a);
    b.RemoveEdge(c.loop);
  });
  // Vertex removal.
  add("remove_vertex_twice", [](WriteBatch& b, const Ctx& c) {
    b.RemoveVertex(c.b);
    b.RemoveVertex(c.b);
  });
  add("remove_new_vertex_twice", [](WriteBatch& b, const Ctx&) {
    NewVertex v = b.AddVertex("Bad");
    b.RemoveVertex(v);
    b.RemoveVertex(v);
  });
  add("remove_removed_vertex", [](WriteBatch& b, const Ctx& c) { b.RemoveVertex(c.removed_v); });
  add("remove_unknown_vertex", [](WriteBatch& b, const Ctx& c) { b.RemoveVertex(c.unknown_v); });
  add("remove_uint64_max_vertex",
      [](WriteBatch& b, const Ctx&) { b.RemoveVertex(VertexId(~std::uint64_t{0})); });
  add("remove_uint64_max_edge", [](WriteBatch& b, const Ctx&) { b.RemoveEdge(EdgeId(~std::uint64_t{0})); });
}

void AddHandleCases(std::vector<Case>& cases) {
  const StatusCode kIA = StatusCode::kInvalidArgument;
  auto add = [&](std::string name, std::function<void(WriteBatch&, const Ctx&)> build) {
    cases.push_back({std::move(name), std::move(build), kIA});
  };
  // Handles recorded by another WriteBatch object. The foreign batch also
  // has index 0, so only the tag tells them apart.
  add("foreign_vertex_as_edge_source", [](WriteBatch& b, const Ctx& c) {
    WriteBatch other;
    NewVertex f = other.AddVertex("Bad");
    b.AddVertex("Bad");
    b.AddEdge("BAD_T", f, c.a);
  });
  add("foreign_vertex_as_edge_target", [](WriteBatch& b, const Ctx& c) {
    WriteBatch other;
    NewVertex f = other.AddVertex("Bad");
    b.AddVertex("Bad");
    b.AddEdge("BAD_T", c.a, f);
  });
  add("foreign_vertex_set_property", [](WriteBatch& b, const Ctx&) {
    WriteBatch other;
    NewVertex f = other.AddVertex("Bad");
    b.AddVertex("Bad");
    b.SetProperty(f, "x", 1);
  });
  add("foreign_vertex_remove_property", [](WriteBatch& b, const Ctx&) {
    WriteBatch other;
    NewVertex f = other.AddVertex("Bad");
    b.AddVertex("Bad");
    b.RemoveProperty(f, "x");
  });
  add("foreign_vertex_remove", [](WriteBatch& b, const Ctx&) {
    WriteBatch other;
    NewVertex f = other.AddVertex("Bad");
    b.AddVertex("Bad");
    b.RemoveVertex(f);
  });
  add("foreign_edge_set_property", [](WriteBatch& b, const Ctx& c) {
    WriteBatch other;
    NewEdge f = other.AddEdge("BAD_T", c.a, c.a);
    b.AddEdge("BAD_T", c.a, c.a);
    b.SetProperty(f, "x", 1);
  });
  add("foreign_edge_remove_property", [](WriteBatch& b, const Ctx& c) {
    WriteBatch other;
    NewEdge f = other.AddEdge("BAD_T", c.a, c.a);
    b.AddEdge("BAD_T", c.a, c.a);
    b.RemoveProperty(f, "x");
  });
  add("foreign_edge_remove", [](WriteBatch& b, const Ctx& c) {
    WriteBatch other;
    NewEdge f = other.AddEdge("BAD_T", c.a, c.a);
    b.AddEdge("BAD_T", c.a, c.a);
    b.RemoveEdge(f);
  });
  add("foreign_vertex_from_live_batch_with_more_vertices", [](WriteBatch& b, const Ctx& c) {
    WriteBatch other;
    other.AddVertex("Bad");
    NewVertex f = other.AddVertex("Bad");  // index 1; this batch has index 1 too
    b.AddVertex("Bad");
    b.AddVertex("Bad");
    b.AddEdge("BAD_T", c.a, f);
  });
  // Handles with an index the batch has not added (yet).
  add("vertex_index_not_yet_added_edge", [](WriteBatch& b, const Ctx& c) {
    NewVertex own = b.AddVertex("Bad");
    NewVertex future{own.batch_tag, own.index + 1};
    b.AddEdge("BAD_T", c.a, future);
    b.AddVertex("Bad");  // index added only after its use
  });
  add("vertex_index_not_yet_added_set", [](WriteBatch& b, const Ctx&) {
    NewVertex own = b.AddVertex("Bad");
    b.SetProperty(NewVertex{own.batch_tag, own.index + 1}, "x", 1);
  });
  add("vertex_index_far_beyond", [](WriteBatch& b, const Ctx&) {
    NewVertex own = b.AddVertex("Bad");
    b.RemoveVertex(NewVertex{own.batch_tag, 1000000});
  });
  add("edge_index_not_yet_added_set", [](WriteBatch& b, const Ctx& c) {
    NewEdge own = b.AddEdge("BAD_T", c.a, c.b);
    b.SetProperty(NewEdge{own.batch_tag, own.index + 1}, "x", 1);
    b.AddEdge("BAD_T", c.a, c.b);
  });
  add("edge_index_not_yet_added_remove", [](WriteBatch& b, const Ctx& c) {
    NewEdge own = b.AddEdge("BAD_T", c.a, c.b);
    b.RemoveEdge(NewEdge{own.batch_tag, own.index + 1});
  });
  Case cleared{"vertex_handle_from_before_clear",
               [](WriteBatch& b, const Ctx& c) {
                 NewVertex old = b.AddVertex("Bad");
                 b.Clear();
                 b.AddEdge("BAD_T", c.a, old);
               },
               kIA};
  cleared.noise_before = false;  // Clear would drop it
  cases.push_back(cleared);
  // Duplicate keys in an add's property list.
  add("duplicate_key_add_vertex", [](WriteBatch& b, const Ctx&) {
    b.AddVertex("Bad", {{"x", 1}, {"x", 2}});
  });
  add("duplicate_key_same_value_add_vertex", [](WriteBatch& b, const Ctx&) {
    b.AddVertex("Bad", {{"x", 1}, {"bad_key", 0}, {"x", 1}});
  });
  add("duplicate_key_add_edge", [](WriteBatch& b, const Ctx& c) {
    b.AddEdge("BAD_T", c.a, c.b, {{"x", "p"}, {"x", "q"}});
  });
}

void AddClosedCases(std::vector<Case>& cases) {
  Case valid{"write_after_close", [](WriteBatch& b, const Ctx&) { b.AddVertex("Bad"); },
             StatusCode::kFailedPrecondition};
  valid.close_first = true;
  cases.push_back(valid);
  Case empty{"empty_write_after_close", [](WriteBatch&, const Ctx&) {}, StatusCode::kFailedPrecondition};
  empty.close_first = true;
  empty.noise = false;
  cases.push_back(empty);
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  AddUtf8Cases(cases);
  AddEmptyNameCases(cases);
  AddNonFiniteCases(cases);
  AddLimitCases(cases);
  AddPropertyBytesCases(cases);
  AddStringListLimitCases(cases);
  AddDegreeCases(cases);
  AddNotFoundCases(cases);
  AddHandleCases(cases);
  AddClosedCases(cases);
  return cases;
}

WriteBatch BuildBatch(const Case& c, const Ctx& ctx) {
  WriteBatch b;
  if (c.noise && c.noise_before) NoiseBefore(b, ctx);
  c.build(b, ctx);
  if (c.noise) NoiseAfter(b, ctx);
  return b;
}

WriteBatch ValidBatch(const char* label) {
  WriteBatch b;
  NewVertex v = b.AddVertex(label, {{"ok", 1}});
  b.AddEdge("OK_T", v, VertexId(0));
  return b;
}

enum class Mode { kWrite, kWriteAsync, kGrouped };
const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kWrite: return "Write";
    case Mode::kWriteAsync: return "WriteAsync";
    case Mode::kGrouped: return "Grouped";
  }
  return "?";
}

TEST(BadInputTest, EveryBadBatchFailsWholeWithItsCode) {
  const std::vector<Case> cases = AllCases();
  const std::vector<std::string> probes = [] {
    std::vector<std::string> p = kProbeNames;
    p.push_back("Before");
    p.push_back("After");
    p.push_back("OK_T");
    return p;
  }();

  // What the grouped mode must end with: base + Before + After, committed
  // with no bad batch in between.
  std::string grouped_expected;
  {
    Ctx ctx;
    auto g = MakeBaseGraph(&ctx);
    ASSERT_NE(g, nullptr);
    ASSERT_TRUE(g->Write(ValidBatch("Before")).ok());
    ASSERT_TRUE(g->Write(ValidBatch("After")).ok());
    grouped_expected = Dump(g->GetSnapshot(), probes);
  }

  std::size_t runs = 0, wrong_codes = 0, partial = 0, empty_messages = 0, follow_up_failures = 0;
  for (Mode mode : {Mode::kWrite, Mode::kWriteAsync, Mode::kGrouped}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.name) + " via " + ModeName(mode));
      ++runs;
      Ctx ctx;
      std::unique_ptr<Graph> graph = MakeBaseGraph(&ctx);
      ASSERT_NE(graph, nullptr);
      const Snapshot before = graph->GetSnapshot();
      const std::string dump_before = Dump(before, probes);
      if (c.close_first) {
        ASSERT_TRUE(graph->Close().ok());
      }

      WriteBatch batch = BuildBatch(c, ctx);
      Result<CommitInfo> result = Status(StatusCode::kInternal, "not run");
      Result<CommitInfo> before_result = Status(StatusCode::kInternal, "not run");
      Result<CommitInfo> after_result = Status(StatusCode::kInternal, "not run");
      switch (mode) {
        case Mode::kWrite: result = graph->Write(std::move(batch)); break;
        case Mode::kWriteAsync: result = graph->WriteAsync(std::move(batch)).get(); break;
        case Mode::kGrouped: {
          auto f1 = graph->WriteAsync(ValidBatch("Before"));
          auto f2 = graph->WriteAsync(std::move(batch));
          auto f3 = graph->WriteAsync(ValidBatch("After"));
          before_result = f1.get();
          result = f2.get();
          after_result = f3.get();
          break;
        }
      }

      bool wrong = false;
      if (result.ok()) {
        ADD_FAILURE() << "batch committed, expected " << StatusCodeName(c.code);
        wrong = true;
      } else {
        if (result.status().code() != c.code) {
          ADD_FAILURE() << "got " << result.status().ToString() << ", expected " << StatusCodeName(c.code);
          wrong = true;
        }
        if (result.status().message().empty()) {
          ADD_FAILURE() << "empty message";
          ++empty_messages;
        }
      }
      if (wrong) ++wrong_codes;

      const Snapshot after = graph->GetSnapshot();
      const std::string dump_after = Dump(after, probes);
      if (mode == Mode::kGrouped && !c.close_first) {
        EXPECT_TRUE(before_result.ok()) << before_result.status().ToString();
        EXPECT_TRUE(after_result.ok()) << after_result.status().ToString();
        if (before_result.ok() && after_result.ok()) {
          EXPECT_EQ(before_result->sequence, before.sequence() + 1);
          EXPECT_EQ(after_result->sequence, before.sequence() + 2);
        }
        if (dump_after != grouped_expected) {
          ++partial;
          ADD_FAILURE() << "graph differs from base + the two valid batches:\nexpected:\n"
                        << grouped_expected << "actual:\n"
                        << dump_after;
        }
      } else {
        if (mode == Mode::kGrouped) {
          EXPECT_EQ(before_result.status().code(), StatusCode::kFailedPrecondition);
          EXPECT_EQ(after_result.status().code(), StatusCode::kFailedPrecondition);
        }
        if (dump_after != dump_before) {
          ++partial;
          ADD_FAILURE() << "graph changed:\nbefore:\n" << dump_before << "after:\n" << dump_after;
        }
      }
      // The old snapshot is untouched either way.
      EXPECT_EQ(Dump(before, probes), dump_before);

      // A valid batch still works (or, once closed, is refused the same way).
      Result<CommitInfo> next = graph->Write(ValidBatch("Next"));
      if (c.close_first) {
        EXPECT_EQ(next.status().code(), StatusCode::kFailedPrecondition);
        EXPECT_EQ(Dump(graph->GetSnapshot(), probes), dump_before);
      } else if (!next.ok()) {
        ++follow_up_failures;
        ADD_FAILURE() << "follow-up batch failed: " << next.status().ToString();
      } else {
        EXPECT_EQ(next->sequence, after.sequence() + 1);
        Snapshot s = graph->GetSnapshot();
        EXPECT_EQ(s.vertex_count(), after.vertex_count() + 1);
        EXPECT_EQ(s.vertex_id_limit(), after.vertex_id_limit() + 1);
        EXPECT_EQ(next->vertices, std::vector<VertexId>{VertexId(after.vertex_id_limit())});
      }
    }
  }
  std::cout << "bad-input cases: " << runs << ", wrong status codes: " << wrong_codes
            << ", partial batches applied: " << partial << "\n";
  std::cout << "  (" << cases.size() << " table rows x 3 submission modes; empty messages: " << empty_messages
            << ", failed follow-up batches: " << follow_up_failures << ")\n";
  EXPECT_EQ(wrong_codes, 0u);
  EXPECT_EQ(partial, 0u);
}

// Boundary values that must be accepted and stored exactly as given.
TEST(BadInputTest, BoundaryValuesAreAccepted) {
  struct Accepted {
    std::string name;
    std::function<void(WriteBatch&, const Ctx&)> build;
    std::function<void(const Snapshot&, const Ctx&)> check;
    SequenceNumber sequences = 1;  // numbers the batch consumes (an empty batch: none)
  };
  const std::string at_limit(kMaxString, 's');
  const Bytes bytes_at_limit(kMaxString, std::byte{0xff});
  const std::string with_nul("a\0b", 3);
  const Bytes invalid_utf8_bytes = {std::byte{0xC0}, std::byte{0x80}, std::byte{0xFF},
                                    std::byte{0xED}, std::byte{0xA0}, std::byte{0x80}};
  auto vertex_value = [](std::string key, PropertyValue expected) {
    return [key, expected](const Snapshot& s, const Ctx& c) {
      std::optional<PropertyView> got = s.GetProperty(c.a, key);
      ASSERT_TRUE(got.has_value()) << key;
      EXPECT_TRUE(SameValue(*got, expected)) << key << ": " << test_util::Render(*got);
    };
  };
  auto set_on_a = [](std::string key, PropertyValue v) {
    return [key, v](WriteBatch& b, const Ctx& c) { b.SetProperty(c.a, key, v); };
  };
  std::vector<Accepted> table = {
      {"empty_string_value", set_on_a("x", ""), vertex_value("x", "")},
      {"embedded_nul_value", set_on_a("x", with_nul), vertex_value("x", with_nul)},
      {"bytes_not_utf8_checked", set_on_a("x", invalid_utf8_bytes), vertex_value("x", invalid_utf8_bytes)},
      {"empty_bytes", set_on_a("x", Bytes{}), vertex_value("x", Bytes{})},
      {"empty_vector", set_on_a("x", FloatVector{}), vertex_value("x", FloatVector{})},
      {"empty_list", set_on_a("x", StringList{}), vertex_value("x", StringList{})},
      {"list_of_one_empty_string", set_on_a("x", StringList{""}), vertex_value("x", StringList{""})},
      {"list_at_limits", set_on_a("x", StringList(kMaxListElements, std::string(12, 'l'))),
       vertex_value("x", StringList(kMaxListElements, std::string(12, 'l')))},
      {"list_element_at_limit", set_on_a("x", StringList{at_limit, "\xC3\xA9", with_nul}),
       vertex_value("x", StringList{at_limit, "\xC3\xA9", with_nul})},
      {"negative_zero", set_on_a("x", -0.0), vertex_value("x", -0.0)},
      {"subnormal", set_on_a("x", std::numeric_limits<double>::denorm_min()),
       vertex_value("x", std::numeric_limits<double>::denorm_min())},
      {"double_max", set_on_a("x", std::numeric_limits<double>::max()),
       vertex_value("x", std::numeric_limits<double>::max())},
      {"int64_min", set_on_a("x", std::numeric_limits<std::int64_t>::min()),
       vertex_value("x", std::numeric_limits<std::int64_t>::min())},
      {"int64_max", set_on_a("x", std::numeric_limits<std::int64_t>::max()),
       vertex_value("x", std::numeric_limits<std::int64_t>::max())},
      {"vector_negative_zero_and_subnormal",
       set_on_a("x", FloatVector{-0.0f, std::numeric_limits<float>::denorm_min()}),
       vertex_value("x", FloatVector{-0.0f, std::numeric_limits<float>::denorm_min()})},
      {"null_value", set_on_a("x", PropertyValue()), vertex_value("x", PropertyValue())},
      {"string_at_limit", set_on_a("x", at_limit), vertex_value("x", at_limit)},
      {"bytes_at_limit", set_on_a("x", bytes_at_limit), vertex_value("x", bytes_at_limit)},
      {"vector_at_limit", set_on_a("x", FloatVector(kMaxDims, 1.0f)),
       vertex_value("x", FloatVector(kMaxDims, 1.0f))},
      {"max_code_point", set_on_a("x", "\xF4\x8F\xBF\xBF"), vertex_value("x", "\xF4\x8F\xBF\xBF")},
      {"u_ffff_and_bom", set_on_a("x", "\xEF\xBF\xBF\xEF\xBB\xBF"),
       vertex_value("x", "\xEF\xBF\xBF\xEF\xBB\xBF")},
      {"key_at_limit", set_on_a(std::string(kMaxString, 'k'), 1),
       vertex_value(std::string(kMaxString, 'k'), 1)},
      {"multibyte_key", set_on_a("κλειδί", 1), vertex_value("κλειδί", 1)},
      {"label_at_limit", [at_limit](WriteBatch& b, const Ctx&) { b.AddVertex(at_limit); },
       [at_limit](const Snapshot& s, const Ctx&) { EXPECT_TRUE(s.FindLabel(at_limit).has_value()); }},
      {"edge_type_at_limit", [at_limit](WriteBatch& b, const Ctx& c) { b.AddEdge(at_limit, c.a, c.b); },
       [at_limit](const Snapshot& s, const Ctx&) { EXPECT_TRUE(s.FindEdgeType(at_limit).has_value()); }},
      {"remove_absent_key", [](WriteBatch& b, const Ctx& c) { b.RemoveProperty(c.a, "never-set"); },
       [](const Snapshot& s, const Ctx& c) { EXPECT_EQ(s.Properties(c.a).size(), 2u); }},
      {"remove_absent_key_on_edge",
       [](WriteBatch& b, const Ctx& c) { b.RemoveProperty(c.loop, "never-set"); },
       [](const Snapshot& s, const Ctx& c) { EXPECT_TRUE(s.Properties(c.loop).empty()); }},
      {"exactly_max_ops",
       [](WriteBatch& b, const Ctx&) {
         for (std::size_t i = 0; i < kMaxOps / 4; ++i) b.AddVertex("Many", NProps(3));
       },
       [](const Snapshot& s, const Ctx&) { EXPECT_EQ(s.vertex_count(), 4 + kMaxOps / 4); }},
      {"exactly_max_plain_ops",
       [](WriteBatch& b, const Ctx& c) {
         for (std::size_t i = 0; i < kMaxOps; ++i) b.SetProperty(c.a, "x", static_cast<int>(i));
       },
       vertex_value("x", static_cast<int>(kMaxOps - 1))},
      {"exactly_max_props_add", [](WriteBatch& b, const Ctx&) { b.AddVertex("Many", NProps(kMaxProps)); },
       [](const Snapshot& s, const Ctx& c) {
         EXPECT_EQ(s.Properties(VertexId(c.full.value() + 1)).size(), kMaxProps);
       }},
      {"replace_on_full_vertex", [](WriteBatch& b, const Ctx& c) { b.SetProperty(c.full, "k0", "new"); },
       [](const Snapshot& s, const Ctx& c) { EXPECT_EQ(s.GetProperty(c.full, "k0")->as_string(), "new"); }},
      {"remove_then_set_on_full_vertex",
       [](WriteBatch& b, const Ctx& c) {
         b.RemoveProperty(c.full, "k0");
         b.SetProperty(c.full, "k6", 6);
       },
       [](const Snapshot& s, const Ctx& c) {
         EXPECT_EQ(s.Properties(c.full).size(), kMaxProps);
         EXPECT_TRUE(s.GetProperty(c.full, "k6").has_value());
       }},
      {"set_then_remove_on_full_edge_counts_after_the_batch",
       [](WriteBatch& b, const Ctx& c) {
         b.SetProperty(c.full_edge, "k6", 6);
         b.RemoveProperty(c.full_edge, "k0");
       },
       [](const Snapshot& s, const Ctx& c) {
         EXPECT_EQ(s.Properties(c.full_edge).size(), kMaxProps);
         EXPECT_FALSE(s.GetProperty(c.full_edge, "k0").has_value());
       }},
      {"prop_bytes_at_limit",  // 8 + 80 + 80 + 32
       [at_limit](WriteBatch& b, const Ctx&) {
         b.AddVertex("Many", {{"s1", at_limit}, {"s2", at_limit}, {"s3", std::string(16, 's')}});
       },
       [](const Snapshot& s, const Ctx& c) {
         EXPECT_EQ(s.Properties(VertexId(c.full.value() + 1)).size(), 3u);
       }},
      {"prop_bytes_brought_under_the_limit_later_in_the_batch",
       [at_limit](WriteBatch& b, const Ctx&) {
         NewVertex v = b.AddVertex("Many", {{"s1", at_limit}, {"s2", at_limit}, {"s3", at_limit}});
         b.RemoveProperty(v, "s3");
       },
       [](const Snapshot& s, const Ctx& c) {
         EXPECT_EQ(s.Properties(VertexId(c.full.value() + 1)).size(), 2u);
       }},
      {"degree_at_limit",
       [](WriteBatch& b, const Ctx& c) {
         for (int i = 0; i < 5; ++i) b.AddEdge("Many", c.a, c.c);  // a: 3 + 5 out, c: 2 + 5 in
       },
       [](const Snapshot& s, const Ctx& c) {
         EXPECT_EQ(s.OutDegree(c.a), kMaxDegree);
         EXPECT_EQ(s.InDegree(c.c), 7u);
       }},
      {"empty_batch", [](WriteBatch&, const Ctx&) {}, [](const Snapshot&, const Ctx&) {}, /*sequences=*/0},
  };
  for (const Accepted& row : table) {
    SCOPED_TRACE(row.name);
    Ctx ctx;
    std::unique_ptr<Graph> graph = MakeBaseGraph(&ctx);
    ASSERT_NE(graph, nullptr);
    const SequenceNumber seq = graph->GetSnapshot().sequence();
    WriteBatch b;
    row.build(b, ctx);
    Result<CommitInfo> r = graph->Write(std::move(b));
    if (!r.ok()) {
      ADD_FAILURE() << r.status().ToString();
      continue;
    }
    EXPECT_EQ(r->sequence, seq + row.sequences);
    EXPECT_EQ(graph->GetSnapshot().sequence(), seq + row.sequences);
    row.check(graph->GetSnapshot(), ctx);
  }
}

}  // namespace
}  // namespace quiver
