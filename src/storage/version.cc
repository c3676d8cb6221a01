#include "storage/version.h"

#include <cassert>

namespace quiver::storage {

VersionChain::VersionChain() {
  auto* v = new Version();
  v->chain_ = this;
  v->roots.labels = new InternTable(0);
  v->roots.types = new InternTable(0);
  v->roots.keys = new InternTable(0);
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
  {
    base::MutexLock lock(&mu_);
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

void VersionChain::Abandon(Version* v) {
  base::MutexLock lock(&mu_);
  assert(abandoned_ == nullptr);
  abandoned_ = v;
}

void VersionChain::Shutdown() {
  {
    base::MutexLock lock(&mu_);
    shut_down_ = true;
  }
  // Drop the owner's reference on the head; once snapshots still holding
  // versions are released, the last release deletes the chain.
  Release(writer_head_);
}

void VersionChain::OnDead(Version* v) {
  mu_.Lock();
  v->dead_ = true;
  while (oldest_ != nullptr && oldest_->dead_) {
    Version* dead = oldest_;
    if (dead->newer_ != nullptr) {
      dead->newer_->retired_.FreeAll(&account_);
      oldest_ = dead->newer_;
    } else if (abandoned_ != nullptr) {
      // The abandoned version reaches every block of the head it did not
      // retire, plus its own; its retire list holds the rest.
      DestroyGraph(abandoned_->roots, &account_);
      abandoned_->retired_.FreeAll(&account_);
      delete abandoned_;
      abandoned_ = nullptr;
      oldest_ = newest_ = nullptr;
    } else {
      // The newest version dies only after Shutdown: free the whole graph.
      DestroyGraph(dead->roots, &account_);
      oldest_ = newest_ = nullptr;
    }
    delete dead;
  }
  bool last = oldest_ == nullptr && shut_down_;
  mu_.Unlock();
  if (last) delete this;
}

ChainStats VersionChain::Stats() {
  ChainStats s;
  base::MutexLock lock(&mu_);
  for (Version* v = oldest_; v != nullptr; v = v->newer_) {
    if (v->refs_.load(std::memory_order_relaxed) > 0) ++s.live_versions;
    if (v != oldest_) s.retired_bytes += v->retired_.bytes();
  }
  return s;
}

}  // namespace quiver::storage
