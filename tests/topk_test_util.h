// The check the TopKNeighbors tests share: a call's answer against a
// reference built from the entries it examined.
#ifndef QUIVER_TESTS_TOPK_TEST_UTIL_H_
#define QUIVER_TESTS_TOPK_TEST_UTIL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "quiver/status.h"
#include "quiver/traversal.h"

namespace quiver::test_util {

// (sort key, edge id, neighbour, score) per examined entry with a score,
// sorted: the order TopKNeighbors returns them in.
using TopKReference = std::vector<std::tuple<double, std::uint64_t, std::uint64_t, double>>;

// `s` is ResourceExhausted when a budget stopped the call (`stopped`), else
// Ok; `got` is the first min(k, ref.size()) entries of `ref`. Call under
// ASSERT_NO_FATAL_FAILURE: a wrong size stops the comparison.
inline void ExpectTopKIsTheReference(const Status& s, bool stopped, const std::vector<Neighbor>& got,
                                     const TopKReference& ref, std::size_t k, const std::string& where) {
  EXPECT_EQ(s.code(), stopped ? StatusCode::kResourceExhausted : StatusCode::kOk) << where;
  ASSERT_EQ(got.size(), std::min(k, ref.size())) << where;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].edge.value(), std::get<1>(ref[i])) << where << " #" << i;
    EXPECT_EQ(got[i].vertex.value(), std::get<2>(ref[i])) << where << " #" << i;
    EXPECT_EQ(got[i].score, std::get<3>(ref[i])) << where << " #" << i;
  }
}

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_TOPK_TEST_UTIL_H_
