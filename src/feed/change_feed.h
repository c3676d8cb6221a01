// ChangeFeed: the in-memory window of recent ChangeBatches that
// subscriptions read (quiver/change_feed.h), and the subscriptions.
//
// The committing thread appends the batches of each group it recorded once
// the group is published, in sequence order. It records a group only if a
// subscription was open when the group started (active()): with none, the
// feed costs the writer one atomic load per group. The window is a ring of
// shared_ptrs indexed by sequence, bounded in batches and bytes; appending
// evicts the oldest entries, never waits for a consumer. A consumer copies
// a shared_ptr under the lock and reads the batch outside it.
//
// Window rule: the window [oldest, newest] is contiguous. The writer
// records every group that starts while a subscription is open, so a gap
// (a batch committed while nobody subscribed) can only precede the first
// batch recorded after one: Append then starts the window afresh there.
//
// Thread safety: every method may be called from any thread. The lock is
// held only for O(1) work per batch (and to free evicted batches no
// consumer holds).
#ifndef QUIVER_FEED_CHANGE_FEED_H_
#define QUIVER_FEED_CHANGE_FEED_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "quiver/change_feed.h"
#include "quiver/options.h"
#include "quiver/status.h"

namespace quiver::feed {

// ResourceExhausted with `message`; with no memory left to copy it, the
// same code with a message built once (internal::ImmortalStatus: copying it
// allocates nothing), so an out-of-memory answer never throws.
// ChangeFeed's constructor builds that one.
Status FeedOutOfMemory(std::string_view message);

class ChangeFeed : public std::enable_shared_from_this<ChangeFeed> {
 public:
  explicit ChangeFeed(const ChangeFeedOptions& options);

  // Writer, at the start of a group: whether to record its batches.
  bool active() const { return subscribers_.load(std::memory_order_acquire) != 0; }

  // Writer, after publishing a recorded group: its batches, in sequence
  // order. Allocates nothing; moves the pointers out of `batches`.
  void Append(std::span<std::shared_ptr<const ChangeBatch>> batches);

  // The graph closed: once a subscription has read every batch held, Next
  // answers FailedPrecondition.
  void Shutdown();

  // Registers a subscriber (the writer records from its next group on).
  // Then the caller makes sure every group that started before is
  // published and learns `committed`, the newest sequence then (every batch
  // after it is recorded), and calls Open, or Unregister on failure.
  // ResourceExhausted if the window's index cannot be allocated.
  Status Register();
  void Unregister();
  // A subscription from `from` (0: committed + 1), or the reason there is
  // none (the caller then unregisters).
  Result<std::unique_ptr<ChangeSubscription>> Open(SequenceNumber from, SequenceNumber committed);

 private:
  class Subscription;
  friend class Subscription;

  Result<std::shared_ptr<const ChangeBatch>> Read(Subscription* sub, std::chrono::milliseconds timeout);
  void Close(Subscription* sub);
  std::size_t Slot(SequenceNumber s) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return s % ring_.size(); }

  const ChangeFeedOptions options_;
  std::atomic<std::uint64_t> subscribers_{0};
  base::Mutex mu_;
  base::CondVar cv_{&mu_};
  std::vector<std::shared_ptr<const ChangeBatch>> ring_ ABSL_GUARDED_BY(mu_);
  SequenceNumber oldest_ ABSL_GUARDED_BY(mu_) = 1;  // the window is empty while newest_ < oldest_
  SequenceNumber newest_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::uint64_t waiters_ ABSL_GUARDED_BY(mu_) = 0;
  bool shut_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace quiver::feed

#endif  // QUIVER_FEED_CHANGE_FEED_H_
