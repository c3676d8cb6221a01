// OrderedWriter: see ordered_writer.h.
#include "import/ordered_writer.h"

#include <utility>

namespace quiver::import {

OrderedWriter::OrderedWriter(CsvWriter* w, std::uint64_t chunks, Limits limits)
    : w_(w), chunks_(chunks), limits_(limits), ring_(limits.ring) {}

bool OrderedWriter::Claim(std::uint64_t* c) {
  if (failed_.load(std::memory_order_relaxed)) return false;
  *c = next_.fetch_add(1, std::memory_order_relaxed);
  return *c < chunks_;
}

Status OrderedWriter::Spill(std::uint64_t c, std::string* text) {
  base::MutexLock lock(&mu_);
  while (turn_ != c && !failed_.load(std::memory_order_relaxed)) cv_.Wait();
  if (failed_.load(std::memory_order_relaxed)) return CancelledError("Export: another worker failed");
  QUIVER_RETURN_IF_ERROR(Fail(w_->Write(*text)));
  Recycle(text);
  return Status::Ok();
}

Status OrderedWriter::Done(std::uint64_t c, std::string* text) {
  base::MutexLock lock(&mu_);
  // c >= turn_ (invariant 1), so c - turn_ does not wrap.
  if (turn_ != c && c - turn_ < ring_.size() && pending_bytes_ + text->capacity() <= limits_.pending_bytes) {
    Slot& slot = ring_[c % ring_.size()];
    slot.text.swap(*text);  // the slot's buffer is empty and holds no room
    slot.ready = true;
    pending_bytes_ += slot.text.capacity();
    return Status::Ok();
  }
  while (turn_ != c && !failed_.load(std::memory_order_relaxed)) cv_.Wait();
  if (failed_.load(std::memory_order_relaxed)) return CancelledError("Export: another worker failed");
  QUIVER_RETURN_IF_ERROR(Fail(w_->Write(*text)));
  Recycle(text);
  ++turn_;
  for (Slot* slot; (slot = &ring_[turn_ % ring_.size()])->ready; ++turn_) {
    QUIVER_RETURN_IF_ERROR(Fail(w_->Write(slot->text)));
    pending_bytes_ -= slot->text.capacity();
    slot->ready = false;
    std::string().swap(slot->text);
  }
  cv_.SignalAll();
  return Status::Ok();
}

void OrderedWriter::Abort(const Status& s) {
  base::MutexLock lock(&mu_);
  Fail(s).IgnoreError();
}

Status OrderedWriter::status() {
  base::MutexLock lock(&mu_);
  return first_;
}

std::size_t OrderedWriter::pending_bytes() {
  base::MutexLock lock(&mu_);
  return pending_bytes_;
}

Status OrderedWriter::Fail(Status s) {
  if (!s.ok() && !failed_.load(std::memory_order_relaxed)) {
    first_ = s;
    failed_.store(true, std::memory_order_relaxed);
    cv_.SignalAll();
  }
  return s;
}

void OrderedWriter::Recycle(std::string* text) const {
  if (text->capacity() > 2 * limits_.spill_bytes) {
    std::string().swap(*text);
  } else {
    text->clear();
  }
}

}  // namespace quiver::import
