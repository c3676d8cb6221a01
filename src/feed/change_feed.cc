#include "feed/change_feed.h"

#include <algorithm>
#include <new>
#include <utility>
#include <vector>

#include "base/strings.h"

namespace quiver::feed {

namespace {

const Status& ImmortalOutOfMemory() {
  static const Status* const s =
      new Status(internal::ImmortalStatus(StatusCode::kResourceExhausted, "change feed: out of memory"));
  return *s;
}

// Read's answers that must not allocate (Next never throws): built with
// the first feed, while memory is there.
const Status& SubscriptionClosed() {
  static const Status* const s = new Status(
      internal::ImmortalStatus(StatusCode::kFailedPrecondition, "change feed: the subscription is closed"));
  return *s;
}
const Status& GraphClosedAndDelivered() {
  static const Status* const s = new Status(internal::ImmortalStatus(
      StatusCode::kFailedPrecondition,
      "change feed: the graph is closed and every batch it committed was delivered"));
  return *s;
}

}  // namespace

Status FeedOutOfMemory(std::string_view message) {
  try {
    return ResourceExhaustedError(message);
  } catch (const std::bad_alloc&) {
    return ImmortalOutOfMemory();
  }
}

ChangeFeed::ChangeFeed(const ChangeFeedOptions& options) : options_(options) {
  ImmortalOutOfMemory().IgnoreError();  // built now, while memory is there
  SubscriptionClosed().IgnoreError();
  GraphClosedAndDelivered().IgnoreError();
}

class ChangeFeed::Subscription final : public ChangeSubscription {
 public:
  Subscription(std::shared_ptr<ChangeFeed> feed, SequenceNumber next) : feed_(std::move(feed)), next_(next) {}
  ~Subscription() override {
    Close();
    feed_->Unregister();
  }

  SequenceNumber next_sequence() const override {
    base::MutexLock lock(&feed_->mu_);
    return next_;
  }
  Result<std::shared_ptr<const ChangeBatch>> Next(std::chrono::milliseconds timeout) override {
    return feed_->Read(this, timeout);
  }
  void Close() override { feed_->Close(this); }

 private:
  friend class ChangeFeed;
  const std::shared_ptr<ChangeFeed> feed_;
  // Guarded by feed_->mu_.
  SequenceNumber next_;
  bool closed_ = false;
};

void ChangeFeed::Append(std::span<std::shared_ptr<const ChangeBatch>> batches) {
  bool wake = false;
  {
    base::MutexLock lock(&mu_);
    // The last subscription closed while the group was built: keep nothing.
    if (subscribers_.load(std::memory_order_relaxed) == 0 || ring_.empty()) {
      for (SequenceNumber s = oldest_; s <= newest_; ++s) ring_[Slot(s)].reset();
      oldest_ = newest_ + 1;
      bytes_ = 0;
      return;
    }
    for (std::shared_ptr<const ChangeBatch>& b : batches) {
      const SequenceNumber s = b->sequence;
      if (s != newest_ + 1) {  // a gap: batches committed while nobody subscribed
        for (SequenceNumber t = oldest_; t <= newest_; ++t) ring_[Slot(t)].reset();
        oldest_ = s;
        bytes_ = 0;
      }
      while (oldest_ <= newest_ &&
             (newest_ - oldest_ + 1 >= ring_.size() || bytes_ + b->bytes > options_.max_retained_bytes)) {
        bytes_ -= ring_[Slot(oldest_)]->bytes;
        ring_[Slot(oldest_)].reset();
        ++oldest_;
      }
      bytes_ += b->bytes;
      ring_[Slot(s)] = std::move(b);
      newest_ = s;
    }
    wake = waiters_ != 0;
  }
  if (wake) cv_.SignalAll();
}

void ChangeFeed::Shutdown() {
  {
    base::MutexLock lock(&mu_);
    shut_ = true;
  }
  cv_.SignalAll();
}

Status ChangeFeed::Register() {
  base::MutexLock lock(&mu_);
  if (ring_.empty()) {
    try {
      ring_.resize(options_.max_retained_batches);
    } catch (const std::bad_alloc&) {
      return FeedOutOfMemory("change feed: out of memory for the window's index");
    }
  }
  subscribers_.fetch_add(1, std::memory_order_acq_rel);
  return Status::Ok();
}

void ChangeFeed::Unregister() {
  // The last one frees the window now rather than at the next recorded
  // group, after the lock: up to max_retained_batches batches, whose frees
  // the writer, whose Append takes the same lock, must not wait out. The
  // ring (the window's index) stays for the next subscription: making it
  // again would allocate under that lock.
  std::vector<std::shared_ptr<const ChangeBatch>> window;   // destroyed after the lock
  if (subscribers_.load(std::memory_order_acquire) == 1) {  // likely the last (checked again below)
    try {
      window.reserve(options_.max_retained_batches);  // before the lock: moving in allocates nothing
    } catch (const std::bad_alloc&) {
      // Out of memory: the batches are freed under the lock instead.
    }
  }
  base::MutexLock lock(&mu_);
  if (subscribers_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  for (SequenceNumber s = oldest_; s <= newest_ && !ring_.empty(); ++s) {
    std::shared_ptr<const ChangeBatch>& b = ring_[Slot(s)];
    if (window.size() < window.capacity()) window.push_back(std::move(b));
    b.reset();
  }
  oldest_ = newest_ + 1;
  bytes_ = 0;
}

Result<std::unique_ptr<ChangeSubscription>> ChangeFeed::Open(SequenceNumber from, SequenceNumber committed) {
  if (from == 0) from = committed + 1;
  // The messages allocate; a durable graph's Subscribe takes the
  // OutOfRange path routinely (then reads its files), so it must not throw.
  try {
    base::MutexLock lock(&mu_);
    if (from > committed + 1)
      return OutOfRangeError(base::StrCat("change feed: sequence ", from, " is past the next one to commit (",
                                          committed + 1, ")"));
    // Every batch after `committed` will be recorded; those up to it are
    // held if the window is contiguous up to it and starts at or before `from`.
    const bool held = from == committed + 1 || (newest_ >= committed && from >= oldest_);
    if (!held) {
      if (oldest_ <= newest_ && newest_ >= committed)
        return OutOfRangeError(base::StrCat("change feed: sequence ", from,
                                            " is no longer retained; it holds ", oldest_, " to ", newest_,
                                            " (subscribe from one of those, or from ", committed + 1,
                                            ", the next to commit, with a snapshot: SubscribeWithSnapshot)"));
      return OutOfRangeError(base::StrCat("change feed: sequence ", from, " is not retained (nothing before ",
                                          committed + 1,
                                          ", the next to commit, is: no subscription was open when it "
                                          "committed); start from a snapshot with SubscribeWithSnapshot"));
    }
  } catch (const std::bad_alloc&) {
    return FeedOutOfMemory("change feed: out of memory");
  }
  try {
    return std::unique_ptr<ChangeSubscription>(new Subscription(shared_from_this(), from));
  } catch (const std::bad_alloc&) {
    return FeedOutOfMemory("change feed: out of memory for a subscription");
  }
}

Result<std::shared_ptr<const ChangeBatch>> ChangeFeed::Read(Subscription* sub,
                                                            std::chrono::milliseconds timeout) {
  // A timeout of years (milliseconds::max() included) waits until a batch
  // comes or the subscription or graph closes; the deadline saturates.
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = timeout > std::chrono::hours(24 * 365 * 100)
                            ? std::chrono::steady_clock::time_point::max()
                        : timeout.count() <= 0 ? start
                                               : start + timeout;
  // Under the lock: integer compares and one shared_ptr copy. The
  // messages are built after it is released, so the writer never waits for
  // an allocation of a consumer's.
  enum class Outcome { kBatch, kTimeout, kClosed, kBehind, kShut };
  Outcome outcome = Outcome::kTimeout;
  std::shared_ptr<const ChangeBatch> batch;
  SequenceNumber next = 0, oldest = 0, newest = 0;
  {
    base::MutexLock lock(&mu_);
    for (;;) {
      next = sub->next_;
      oldest = oldest_;
      newest = newest_;
      if (sub->closed_) {
        outcome = Outcome::kClosed;
      } else if (next < oldest_) {
        outcome = Outcome::kBehind;
      } else if (next <= newest_) {
        sub->next_ = next + 1;
        batch = ring_[Slot(next)];
        outcome = Outcome::kBatch;
      } else if (shut_) {
        outcome = Outcome::kShut;
      } else {
        const auto now = std::chrono::steady_clock::now();
        if (now < deadline) {
          ++waiters_;
          cv_.WaitFor(std::min<std::chrono::milliseconds>(
              std::chrono::ceil<std::chrono::milliseconds>(deadline - now), std::chrono::hours(1)));
          --waiters_;
          continue;
        }
        outcome = Outcome::kTimeout;
      }
      break;
    }
  }
  switch (outcome) {
    case Outcome::kBatch: return batch;
    case Outcome::kTimeout: return std::shared_ptr<const ChangeBatch>();
    case Outcome::kClosed: return SubscriptionClosed();
    case Outcome::kBehind:
      try {
        return ResourceExhaustedError(base::StrCat(
            "change feed: fell behind at sequence ", next, ": it is no longer retained",
            oldest <= newest ? base::StrCat("; resume from ", oldest, " to ", newest) : std::string(),
            " or from a new snapshot with SubscribeWithSnapshot (ChangeFeedOptions bound what is kept)"));
      } catch (const std::bad_alloc&) {
        return ImmortalOutOfMemory();  // ResourceExhausted too: the consumer resubscribes
      }
    case Outcome::kShut: break;
  }
  try {
    return FailedPreconditionError(base::StrCat(
        "change feed: the graph is closed and every batch it committed was delivered (next sequence ", next,
        ")"));
  } catch (const std::bad_alloc&) {
    return GraphClosedAndDelivered();
  }
}

void ChangeFeed::Close(Subscription* sub) {
  {
    base::MutexLock lock(&mu_);
    sub->closed_ = true;
  }
  cv_.SignalAll();
}

}  // namespace quiver::feed
