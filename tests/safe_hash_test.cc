// base::SafeFlatHashMap and SafeFlatHashSet (base/safe_hash.h): an insertion
// that runs out of memory throws std::bad_alloc and leaves the table as it
// was, usable and destructible, and the room Reserve makes is room Abseil
// really has (insertions into it allocate nothing). Allocations fail through
// the test binary's operator new (alloc_hook.h); AddressSanitizer checks that
// no table is read out of bounds. (Abseil's own tables fail the first test:
// a map of string sets swept the same way in a standalone program crashed
// in its destructor at the first failing resize.)
#include "base/safe_hash.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <new>
#include <string>
#include <thread>

#include "alloc_hook.h"
#include "base/memory.h"
#include "base/strings.h"

namespace quiver {
namespace {

using base::AllocationFaultMode;
using Names = base::SafeFlatHashSet<std::string, base::StringHash, base::StringEq>;
using NamesById = base::SafeFlatHashMap<std::uint64_t, Names>;

constexpr int kInserts = 300;
constexpr std::uint64_t kIds = 37;

// Long enough to be allocated (no small-string buffer).
std::string Name(int i) { return "a name long enough to allocate #" + std::to_string(i); }

// Inserts names [from, to) as a writer would: the name built first, then
// its id's set (built in place if absent), then the name moved in. Returns
// how many were inserted before an allocation failed.
int InsertNames(NamesById& m, int from, int to) {
  int done = from;
  try {
    for (; done < to; ++done) {
      std::string name = Name(done);
      Names& names = m[done % kIds];
      if (!names.contains(name)) names.insert(std::move(name));
    }
  } catch (const std::bad_alloc&) {
  }
  return done;
}

// m holds exactly names [0, n).
void ExpectHolds(const NamesById& m, int n, const std::string& where) {
  std::size_t total = 0;
  for (const auto& [id, names] : m) total += names.size();
  ASSERT_EQ(total, static_cast<std::size_t>(n)) << where;
  for (int i = 0; i < n; ++i) ASSERT_TRUE(m.at(i % kIds).contains(Name(i))) << where << ", name " << i;
}

TEST(SafeHashTest, InsertionsAreAllOrNothingAtEveryAllocation) {
  for (AllocationFaultMode mode : {AllocationFaultMode::kOnce, AllocationFaultMode::kFromThenOn}) {
    const char* mode_name = mode == AllocationFaultMode::kOnce ? "once" : "from N on";
    std::uint64_t n = 1;
    for (;; ++n) {
      const std::string where = std::string(mode_name) + ", allocation " + std::to_string(n);
      NamesById m;
      int done = 0;
      std::uint64_t counted = 0;
      {
        test_util::ScopedOperatorNewFaults hook;
        base::ArmAllocationFaults(std::this_thread::get_id(), n, mode);
        done = InsertNames(m, 0, kInserts);
        counted = base::DisarmAllocationFaults();
      }
      if (counted < n) {  // nothing failed: every allocation was enumerated
        ASSERT_EQ(done, kInserts);
        break;
      }
      ASSERT_LT(done, kInserts) << where << ": an allocation failed and nothing threw";
      ExpectHolds(m, done, where);
      // Still a working table: the rest goes in, and it is destroyed whole.
      ASSERT_EQ(InsertNames(m, done, kInserts), kInserts) << where;
      ExpectHolds(m, kInserts, where);
    }
    std::cout << "[          ] fail " << mode_name << ": " << n - 1
              << " failing allocations enumerated, each left the tables as they were\n";
    EXPECT_GT(n, std::uint64_t{kInserts});  // a string each, and the tables' arrays
  }
}

// Room from Reserve(k) takes k new elements without allocating, whatever
// the table went through before: grown by insertions, emptied by clear,
// holed by erasures (whose slots Abseil does not give back as room).
TEST(SafeHashTest, ReservedRoomTakesItsInsertionsWithoutAllocating) {
  for (int present : {0, 1, 2, 6, 7, 13, 14, 100, 1000}) {
    for (int erased : {0, 1, present / 2, present}) {
      if (erased > present) continue;
      for (int k : {1, 2, 3, 7, 8, 50, 300}) {
        base::SafeFlatHashSet<std::uint64_t> s;
        std::uint64_t next = 0;
        for (int i = 0; i < present; ++i) s.insert(next++);
        for (int i = 0; i < erased; ++i) s.erase(static_cast<std::uint64_t>(i));
        s.Reserve(static_cast<std::size_t>(k));
        bool threw = false;
        {
          test_util::ScopedOperatorNewFaults hook;
          base::ArmAllocationFaults(std::this_thread::get_id(), 1, AllocationFaultMode::kFromThenOn);
          try {
            for (int i = 0; i < k; ++i) s.insert(next++);
            s.insert(std::uint64_t{next - 1});  // present: never grows
          } catch (const std::bad_alloc&) {
            threw = true;
          }
          base::DisarmAllocationFaults();
        }
        ASSERT_FALSE(threw) << present << " present, " << erased << " erased, room for " << k;
        ASSERT_EQ(s.size(), static_cast<std::size_t>(present - erased + k));
      }
    }
  }
}

}  // namespace
}  // namespace quiver
