#include "storage/version.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <memory>

#include "base/cpus.h"
#include "index/catalog.h"

namespace quiver::storage {
namespace {

// Slots per chain: twice the CPUs this process may use (threads that pin
// at the same moment run at the same moment), so threads rarely share one,
// at least 8 and at most the array's size (power of two, for the mask).
std::uint32_t SlotCount(std::uint32_t max_slots) {
  const std::uint32_t hw = std::max(1u, base::AvailableCpus());
  return std::clamp(std::bit_ceil(2 * hw), 8u, max_slots);
}

// A thread's ticket, taken on its first pin; its slot in every chain is the
// ticket modulo that chain's slot count, so consecutive threads never share.
std::atomic<std::uint32_t> g_next_ticket{0};

std::uint32_t ThisThreadTicket() {
  thread_local const std::uint32_t ticket = g_next_ticket.fetch_add(1, std::memory_order_relaxed);
  return ticket;
}

}  // namespace

namespace {
std::atomic<std::uint64_t> next_chain_id{1};
}  // namespace

VersionChain::VersionChain()
    : slot_mask_(SlotCount(kMaxSlots) - 1), id_(next_chain_id.fetch_add(1, std::memory_order_relaxed)) {
  // Owned until every allocation succeeded: out of memory part-way frees
  // what was made (the constructor throws, nothing leaks).
  std::unique_ptr<Version> version(new Version());
  auto labels = std::make_unique<InternTable>(0);
  auto types = std::make_unique<InternTable>(0);
  auto keys = std::make_unique<InternTable>(0);
  auto catalog = std::make_unique<index::Catalog>(0);
  Version* v = version.release();
  v->chain_ = this;
  v->roots.labels = labels.release();
  v->roots.types = types.release();
  v->roots.keys = keys.release();
  v->roots.catalog = catalog.release();
  oldest_ = newest_ = v;
  writer_head_ = v;
  head_word_.store(reinterpret_cast<std::uint64_t>(v), std::memory_order_release);
  head_.store(v, std::memory_order_release);
}

const Version* VersionChain::Acquire() {
  std::uint64_t word = head_word_.fetch_add(std::uint64_t{1} << kCountShift, std::memory_order_acquire);
  auto* v = reinterpret_cast<Version*>(word & kPointerMask);
  v->refs_.fetch_add(1, std::memory_order_relaxed);
  if (test_acquire_hook_) test_acquire_hook_();
  // Hand the in-flight count back, or, if the head moved, our own unit: the
  // writer counts us in its fold instead. The fold may not have happened
  // yet, but the writer's bias (added before the head moved, which the
  // acquire load orders before this) keeps v's count above zero until it
  // has (version.7).
  std::uint64_t cur = head_word_.load(std::memory_order_acquire);
  while (true) {
    if ((cur & kPointerMask) != (word & kPointerMask)) {
      v->refs_.fetch_sub(1, std::memory_order_relaxed);  // cannot reach zero: the bias
      break;
    }
    // Release: our unit is counted before the writer can read the in-flight
    // count without us.
    if (head_word_.compare_exchange_weak(cur, cur - (std::uint64_t{1} << kCountShift),
                                         std::memory_order_acq_rel, std::memory_order_acquire)) {
      break;
    }
  }
  return v;
}

void VersionChain::Release(const Version* v) {
  auto* mv = const_cast<Version*>(v);
  const std::int64_t before = mv->refs_.fetch_sub(1, std::memory_order_acq_rel);
  assert(before > 0);  // zero units is final (version.2)
  if (before == 1) OnDead(mv);
}

ReaderPin VersionChain::AcquirePin() {
  const std::uint32_t s = ThisThreadTicket() & slot_mask_;
  std::atomic<std::uint64_t>& word = slots_[s].word;
  // Fast path: the slot holds the head; add a pin. The slot's unit keeps the
  // version alive while the pin is counted (version.4, version.5).
  const Version* h = head_.load(std::memory_order_acquire);
  std::uint64_t w = word.load(std::memory_order_relaxed);
  while (SlotVersion(w) == h && Pins(w) < kMaxPins) {
    if (word.compare_exchange_weak(w, w + kPinUnit, std::memory_order_acquire, std::memory_order_relaxed))
      return {h, s};
  }
  return AcquirePinSlow(s);
}

ReaderPin VersionChain::AcquirePinSlow(std::uint32_t s) {
  slow_pins_.fetch_add(1, std::memory_order_relaxed);
  const Version* v = Acquire();  // one unit, ours
  std::atomic<std::uint64_t>& word = slots_[s].word;
  std::uint64_t w = word.load(std::memory_order_relaxed);
  while (true) {
    const Version* held = SlotVersion(w);
    if (held == v) {
      // Installed meanwhile (or the head pointer lagged the head word): pin
      // it and give back our unit, which cannot be the last (the slot's).
      if (Pins(w) >= kMaxPins) return {v, ReaderPin::kNoSlot};
      if (word.compare_exchange_weak(w, w + kPinUnit, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        Release(v);
        return {v, s};
      }
      continue;
    }
    // Pinned on an older version: keep the direct reference (version.5).
    if (Pins(w) != 0) return {v, ReaderPin::kNoSlot};
    // Install: the slot takes our unit, and we take the unit of the version
    // it held (version.4). w has no stale bit: a stale word has pins.
    if (word.compare_exchange_weak(w, reinterpret_cast<std::uint64_t>(v) + kPinUnit,
                                   std::memory_order_seq_cst, std::memory_order_relaxed)) {
      // If v was superseded before the install, the writer's scan may have
      // missed this slot: mark it stale ourselves (version.6). Our pin
      // keeps the word's version fixed meanwhile.
      if (head_.load(std::memory_order_seq_cst) != v) {
        std::uint64_t x = word.load(std::memory_order_relaxed);
        while ((x & kStaleBit) == 0 &&
               !word.compare_exchange_weak(x, x | kStaleBit, std::memory_order_acq_rel,
                                           std::memory_order_relaxed)) {
        }
      }
      // Last: v is alive (our pin), so the chain outlives this even if
      // `held` dies here.
      if (held != nullptr) Release(held);
      return {v, s};
    }
  }
}

void VersionChain::ReleasePin(ReaderPin pin) {
  if (pin.slot == ReaderPin::kNoSlot) return Release(pin.version);
  std::atomic<std::uint64_t>& word = slots_[pin.slot].word;
  std::uint64_t w = word.load(std::memory_order_relaxed);
  while (true) {
    // Our pin is counted, so the word holds pin.version (version.5).
    assert(SlotVersion(w) == pin.version && Pins(w) > 0);
    if (Pins(w) == 1 && (w & kStaleBit) != 0) {
      // The last pin of a superseded slot: empty it; its unit is ours.
      if (word.compare_exchange_weak(w, 0, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        Release(pin.version);  // may delete the chain: nothing after this
        return;
      }
    } else if (word.compare_exchange_weak(w, w - kPinUnit, std::memory_order_release,
                                          std::memory_order_relaxed)) {
      return;  // the chain may go from here on (if the writer empties the slot)
    }
  }
}

void VersionChain::RetireSlots(const Version* head) {
  for (std::uint32_t i = 0; i <= slot_mask_; ++i) {
    std::atomic<std::uint64_t>& word = slots_[i].word;
    std::uint64_t w = word.load(std::memory_order_seq_cst);
    while (true) {
      const Version* held = SlotVersion(w);
      if (held == nullptr || held == head || (w & kStaleBit) != 0) break;
      if (Pins(w) == 0) {
        if (word.compare_exchange_weak(w, 0, std::memory_order_acq_rel, std::memory_order_relaxed)) {
          Release(held);  // the slot's unit (version.4); the owner's keeps the chain
          break;
        }
      } else if (word.compare_exchange_weak(w, w | kStaleBit, std::memory_order_acq_rel,
                                            std::memory_order_relaxed)) {
        break;  // the last unpin empties it
      }
    }
  }
}

Version* VersionChain::NewVersion(MutationContext* ctx) {
  auto* v = new Version();
  v->chain_ = this;
  v->roots = writer_head_->roots;
  ctx->retired = &v->retired_;
  ctx->account = &account_;
  return v;
}

void VersionChain::Publish(Version* v, bool same_contents) {
  assert(reinterpret_cast<std::uint64_t>(v) <= kPointerMask);
  // Invariant 3.
  assert(same_contents ? v->roots.sequence == writer_head_->roots.sequence
                       : v->roots.sequence > writer_head_->roots.sequence);
  (void)same_contents;
  retired_bytes_.fetch_add(v->retired_.bytes(), std::memory_order_relaxed);
  live_versions_.fetch_add(1, std::memory_order_relaxed);
  {
    ChainLock lock(this);
    newest_->newer_ = v;
    newest_ = v;
  }
  // The bias goes on before the head moves: from then until the fold below,
  // readers that saw the move give back units the fold has not added yet,
  // and the bias keeps prev's count from reaching zero meanwhile (version.7).
  auto* prev = const_cast<Version*>(writer_head_);
  prev->refs_.fetch_add(kFoldBias, std::memory_order_relaxed);
  // Release: every block of v, and the bias, were written before this store
  // (invariant 1).
  std::uint64_t old = head_word_.exchange(reinterpret_cast<std::uint64_t>(v), std::memory_order_acq_rel);
  assert(reinterpret_cast<Version*>(old & kPointerMask) == prev);
  writer_head_ = v;
  head_.store(v, std::memory_order_seq_cst);  // then scan the slots (version.6)
  RetireSlots(v);
  if (test_fold_hook_) test_fold_hook_();
  std::int64_t in_flight = static_cast<std::int64_t>(old >> kCountShift);
  // Fold in the in-flight acquisitions, take the bias off and drop the
  // owner's reference: the first moment prev's count can reach zero.
  const std::int64_t delta = in_flight - 1 - kFoldBias;
  const std::int64_t before = prev->refs_.fetch_add(delta, std::memory_order_acq_rel);
  assert(before > kFoldBias - (std::int64_t{1} << (64 - kCountShift)));  // the bias was never spent
  assert(before + delta >= 0);
  if (before + delta == 0) OnDead(prev);
}

void VersionChain::Discard(Version* v) {
  assert(v->retired_.empty());
  delete v;
}

void VersionChain::RollBack(Version* v, MutationContext& ctx) {
  assert(ctx.blocks != nullptr && ctx.retired == &v->retired_);
  // Links first: they are published nodes' pointers to private blocks.
  ctx.blocks->FreeAll(&account_);
  for (InternTable* t : {v->roots.labels, v->roots.types, v->roots.keys})
    if (t->birth() == ctx.epoch) delete t;  // a private clone; the original is the head's
  // Likewise the catalog object; its private tree nodes were in ctx.blocks.
  if (v->roots.catalog->birth() == ctx.epoch) delete v->roots.catalog;
  v->retired_.Forget();  // published blocks: the head still reaches them
  delete v;
}

void VersionChain::Abandon(Version* v, GroupBlocks tracked) {
  v->tracked_ = std::move(tracked);
  ChainLock lock(this);
  assert(abandoned_ == nullptr);
  abandoned_ = v;
}

void VersionChain::Shutdown() {
  {
    ChainLock lock(this);
    shut_down_ = true;
  }
  // No acquisitions from here on: let every slot go (version.6), then the
  // owner's reference on the head.
  head_.store(nullptr, std::memory_order_seq_cst);
  RetireSlots(nullptr);
  // Drop the owner's reference on the head; once snapshots still holding
  // versions are released, the last release deletes the chain.
  Release(writer_head_);
}

void VersionChain::OnDead(Version* v) {
  Version* garbage;
  {
    ChainLock lock(this);
    assert(!v->dead_);
    v->dead_ = true;  // version.2
    live_versions_.fetch_sub(1, std::memory_order_relaxed);
    if (sweeping_ > 0) return;  // the sweeper's next look finds v
    garbage = DetachDead();
    if (garbage == nullptr) return;  // v is not the oldest: some older version is still live
    sweeping_ = 1;
    ++sweeps_;
  }
  bool last;
  while (true) {
    FreeDetached(garbage);  // outside the mutex: the writer's Publish never waits for it
    if (test_sweep_hook_) test_sweep_hook_();
    ChainLock lock(this);
    garbage = DetachDead();
    if (garbage == nullptr) {
      sweeping_ = 0;
      last = oldest_ == nullptr && shut_down_;
      break;
    }
  }
  if (last) delete this;
}

Version* VersionChain::DetachDead() {
  Version* garbage = nullptr;
  std::uint64_t detached = 0;
  while (oldest_ != nullptr && oldest_->dead_ && detached < kDetachChunk) {
    ++detached;
    Version* dead = oldest_;
    // dead's own list went when its predecessor was detached (version.3).
    assert(dead->retired_.empty());
    if (dead->newer_ != nullptr) {
      dead->retired_ = std::move(dead->newer_->retired_);  // version.3: O(1) splice
      oldest_ = dead->newer_;
    } else {
      // The newest version dies only after Shutdown: free the whole graph.
      // An abandoned version reaches every block of the head it did not
      // retire, plus its own, and its retire list holds the rest; then it
      // is destroyed instead of the head.
      oldest_ = newest_ = nullptr;
      if (abandoned_ != nullptr) {
        abandoned_->destroy_ = true;
        abandoned_->newer_ = garbage;
        garbage = abandoned_;
        abandoned_ = nullptr;
      } else {
        dead->destroy_ = true;
      }
    }
    dead->newer_ = garbage;
    garbage = dead;
  }
  max_detached_ = std::max(max_detached_, detached);
  return garbage;
}

void VersionChain::FreeDetached(Version* garbage) {
  while (garbage != nullptr) {
    Version* next = garbage->newer_;
    if (garbage->destroy_) {
      // An abandoned version's tracked blocks are held back from the
      // sweep of what it reaches and its list, then freed once each.
      if (!garbage->tracked_.empty()) account_.HoldFrees(&GroupBlocks::Holds, &garbage->tracked_);
      DestroyGraph(garbage->roots, &account_);  // its list (if any) was never published: not counted
      garbage->retired_.FreeAll(&account_);
      account_.HoldFrees(nullptr, nullptr);
      garbage->tracked_.FreeBlocks(&account_);
    } else {
      retired_bytes_.fetch_sub(garbage->retired_.bytes(), std::memory_order_relaxed);
    }
    garbage->retired_.FreeAll(&account_);
    delete garbage;
    garbage = next;
  }
}

std::uint32_t VersionChain::TEST_ThisThreadSlot() const { return ThisThreadTicket() & slot_mask_; }

std::vector<VersionChain::FieldSpan> VersionChain::TEST_ReaderWrittenFields() const {
  std::vector<FieldSpan> out;
  for (std::uint32_t i = 0; i <= slot_mask_; ++i) out.push_back({&slots_[i].word, sizeof(slots_[i].word)});
  return out;
}

std::vector<VersionChain::FieldSpan> VersionChain::TEST_WriterWrittenFields() const {
  return {{&head_word_, sizeof(head_word_)},
          {&writer_head_, sizeof(writer_head_)},
          {&account_, sizeof(account_)},
          {&slow_pins_, sizeof(slow_pins_)},
          {&retired_bytes_, sizeof(retired_bytes_)},
          {&live_versions_, sizeof(live_versions_)},
          {&mu_, sizeof(mu_)},
          {&holder_, sizeof(holder_)},
          {&lock_count_, sizeof(lock_count_)},
          {&oldest_, sizeof(oldest_)},
          {&newest_, sizeof(newest_)},
          {&shut_down_, sizeof(shut_down_)},
          {&abandoned_, sizeof(abandoned_)},
          {&sweeping_, sizeof(sweeping_)}};
}

ChainStats VersionChain::Stats() const {
  ChainStats s;
  s.live_versions = live_versions_.load(std::memory_order_relaxed);
  s.retired_bytes = retired_bytes_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace quiver::storage
