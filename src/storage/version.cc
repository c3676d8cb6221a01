#include "storage/version.h"

#include <cassert>

#include "index/catalog.h"

namespace quiver::storage {

VersionChain::VersionChain() {
  auto* v = new Version();
  v->chain_ = this;
  v->roots.labels = new InternTable(0);
  v->roots.types = new InternTable(0);
  v->roots.keys = new InternTable(0);
  v->roots.catalog = new index::Catalog(0);
  oldest_ = newest_ = v;
  writer_head_ = v;
  head_word_.store(reinterpret_cast<std::uint64_t>(v), std::memory_order_release);
}

const Version* VersionChain::Acquire() {
  std::uint64_t word = head_word_.fetch_add(std::uint64_t{1} << kCountShift, std::memory_order_acquire);
  auto* v = reinterpret_cast<Version*>(word & kPointerMask);
  v->refs_.fetch_add(1, std::memory_order_relaxed);
  // Hand the in-flight count back, or, if the head moved, the unit the
  // writer folded into v's count for us.
  std::uint64_t cur = head_word_.load(std::memory_order_relaxed);
  while (true) {
    if ((cur & kPointerMask) != (word & kPointerMask)) {
      v->refs_.fetch_sub(1, std::memory_order_relaxed);  // cannot reach zero: we hold one
      break;
    }
    if (head_word_.compare_exchange_weak(cur, cur - (std::uint64_t{1} << kCountShift),
                                         std::memory_order_relaxed)) {
      break;
    }
  }
  return v;
}

void VersionChain::Release(const Version* v) {
  auto* mv = const_cast<Version*>(v);
  if (mv->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) OnDead(mv);
}

Version* VersionChain::NewVersion(MutationContext* ctx) {
  auto* v = new Version();
  v->chain_ = this;
  v->roots = writer_head_->roots;
  ctx->retired = &v->retired_;
  ctx->account = &account_;
  return v;
}

void VersionChain::Publish(Version* v) {
  assert(reinterpret_cast<std::uint64_t>(v) <= kPointerMask);
  assert(v->roots.sequence > writer_head_->roots.sequence);  // invariant 3
  retired_bytes_.fetch_add(v->retired_.bytes(), std::memory_order_relaxed);
  live_versions_.fetch_add(1, std::memory_order_relaxed);
  {
    ChainLock lock(this);
    newest_->newer_ = v;
    newest_ = v;
  }
  // Release: every block of v was written before this store (invariant 1).
  std::uint64_t old = head_word_.exchange(reinterpret_cast<std::uint64_t>(v), std::memory_order_acq_rel);
  auto* prev = reinterpret_cast<Version*>(old & kPointerMask);
  writer_head_ = v;
  std::int64_t in_flight = static_cast<std::int64_t>(old >> kCountShift);
  // Fold in the in-flight acquisitions and drop the owner's reference.
  if (prev->refs_.fetch_add(in_flight - 1, std::memory_order_acq_rel) + in_flight - 1 == 0) OnDead(prev);
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

void VersionChain::Abandon(Version* v) {
  ChainLock lock(this);
  assert(abandoned_ == nullptr);
  abandoned_ = v;
}

void VersionChain::Shutdown() {
  {
    ChainLock lock(this);
    shut_down_ = true;
  }
  // Drop the owner's reference on the head; once snapshots still holding
  // versions are released, the last release deletes the chain.
  Release(writer_head_);
}

void VersionChain::OnDead(Version* v) {
  Version* garbage;
  {
    ChainLock lock(this);
    v->dead_ = true;  // version.2
    live_versions_.fetch_sub(1, std::memory_order_relaxed);
    garbage = DetachDead();
    if (garbage == nullptr) return;  // v is not the oldest: some older version is still live
    ++sweeping_;
  }
  FreeDetached(garbage);  // outside the mutex: the writer's Publish never waits for it
  bool last;
  {
    ChainLock lock(this);
    last = --sweeping_ == 0 && oldest_ == nullptr && shut_down_;
  }
  if (last) delete this;
}

Version* VersionChain::DetachDead() {
  Version* garbage = nullptr;
  while (oldest_ != nullptr && oldest_->dead_) {
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
  return garbage;
}

void VersionChain::FreeDetached(Version* garbage) {
  while (garbage != nullptr) {
    Version* next = garbage->newer_;
    if (garbage->destroy_) {
      DestroyGraph(garbage->roots, &account_);  // its list (if any) was never published: not counted
    } else {
      retired_bytes_.fetch_sub(garbage->retired_.bytes(), std::memory_order_relaxed);
    }
    garbage->retired_.FreeAll(&account_);
    delete garbage;
    garbage = next;
  }
}

ChainStats VersionChain::Stats() const {
  ChainStats s;
  s.live_versions = live_versions_.load(std::memory_order_relaxed);
  s.retired_bytes = retired_bytes_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace quiver::storage
