// The change feed: every committed batch, in commit order, with its effects.
//
// Graph::Subscribe returns a ChangeSubscription that delivers one
// ChangeBatch per committed batch (one per sequence number, none skipped,
// none repeated) from a chosen sequence on: what the batch created and
// removed, and each property it changed with the old and the new value.
// Applying a batch's effects to the snapshot at sequence - 1 gives the
// snapshot at its sequence. The effects are computed once per batch by the
// committing thread, only while some subscription is open; consumers share
// them (a batch is a shared_ptr to an immutable value).
//
// The writer never waits for a consumer. The graph keeps the newest batches
// in memory, up to ChangeFeedOptions::max_retained_batches and
// max_retained_bytes; a consumer whose next batch was dropped from that
// window has fallen behind: Next answers ResourceExhausted, naming the
// oldest sequence still held, and the consumer resubscribes from there (or
// from a new snapshot, Graph::SubscribeWithSnapshot, rebuilding its state
// from the snapshot). docs/change_feed.md is the guide.
//
// Example: keep a copy of the graph's "Account" balances current.
//   auto start = graph->SubscribeWithSnapshot().value();
//   LoadBalances(start.snapshot);                   // the state at start.snapshot.sequence()
//   std::unique_ptr<quiver::ChangeSubscription> sub = std::move(start.subscription);
//   for (;;) {
//     auto next = sub->Next(std::chrono::milliseconds(100));
//     if (!next.ok()) break;                        // fell behind, or closed: see Next
//     if (*next == nullptr) continue;               // nothing committed meanwhile
//     for (const quiver::VertexPropertyChange& c : (*next)->vertex_property_changes)
//       if (c.key == "balance") SetBalance(c.id, c.new_value);
//   }
//
// Thread safety: a ChangeSubscription is used by one consumer thread at a
// time; Close may be called from any thread (it wakes a waiting Next).
// ChangeBatch values are immutable and may be read from any thread.
#ifndef QUIVER_CHANGE_FEED_H_
#define QUIVER_CHANGE_FEED_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "quiver/ids.h"
#include "quiver/status.h"
#include "quiver/value.h"

namespace quiver {

// A vertex as a batch created it (its state after the batch) or as it was
// before a batch removed it. Properties in ascending key-id order.
struct VertexRecord {
  VertexId id;
  std::string label;
  std::vector<Property> properties;
};

// An edge as a batch created it or as it was before a batch removed it.
struct EdgeRecord {
  EdgeId id;
  std::string type;
  VertexId source;
  VertexId target;
  std::vector<Property> properties;
};

// One property of an element that existed before the batch and still
// exists after it, whose value the batch changed: absent (nullopt) before
// and set after, set before and removed after, or set to a different value
// (not identical: -0.0 differs from 0.0). A key the batch set to the value
// it already held, or set and removed again, is not listed.
struct VertexPropertyChange {
  VertexId id;
  std::string key;
  std::optional<PropertyValue> old_value;
  std::optional<PropertyValue> new_value;
};
struct EdgePropertyChange {
  EdgeId id;
  std::string key;
  std::optional<PropertyValue> old_value;
  std::optional<PropertyValue> new_value;
};

// Index lifecycle commits (Graph::CreateIndex, DropIndex) take sequence
// numbers too; their ChangeBatch has no element effects and says which.
enum class IndexChange : std::uint8_t {
  kNone = 0,      // a batch of element operations
  kDeclared = 1,  // CreateIndex declared the index (state kBuilding)
  kReady = 2,     // CreateIndex published its contents
  kDropped = 3,   // DropIndex, or a failed CreateIndex taking its declaration back
};

// The net effects of one committed batch. Elements the batch created and
// removed again do not appear. Every list is in ascending id order
// (property changes by id, then key).
struct ChangeBatch {
  SequenceNumber sequence = 0;
  std::vector<VertexRecord> created_vertices;
  std::vector<EdgeRecord> created_edges;
  // Removed edges include those removed with their vertex (RemoveVertex).
  std::vector<VertexRecord> removed_vertices;
  std::vector<EdgeRecord> removed_edges;
  std::vector<VertexPropertyChange> vertex_property_changes;
  std::vector<EdgePropertyChange> edge_property_changes;
  IndexChange index_change = IndexChange::kNone;
  std::string index_name;  // with index_change != kNone
  // About how many bytes the batch holds (what max_retained_bytes counts).
  std::size_t bytes = 0;
};

// A consumer's position in the change feed. Destroying it closes it.
class ChangeSubscription {
 public:
  ChangeSubscription() = default;
  ChangeSubscription(const ChangeSubscription&) = delete;
  ChangeSubscription& operator=(const ChangeSubscription&) = delete;
  virtual ~ChangeSubscription() = default;

  // The sequence number of the batch the next successful Next returns.
  virtual SequenceNumber next_sequence() const = 0;

  // The next batch, waiting up to `timeout` for it to be committed: OK with
  // the batch; OK with null if none was committed within `timeout` (0 does
  // not wait; milliseconds::max() waits until a batch comes or the
  // subscription or the graph is closed). Errors, after which every later
  // call answers the same:
  //   ResourceExhausted  the consumer fell behind: its next batch is no
  //                      longer retained. The message names the sequence
  //                      and the oldest one still held; subscribe again
  //                      from a sequence still held, or from a snapshot.
  //   FailedPrecondition the subscription was closed, or the graph was
  //                      closed and every batch it committed was delivered.
  virtual Result<std::shared_ptr<const ChangeBatch>> Next(std::chrono::milliseconds timeout) = 0;
  Result<std::shared_ptr<const ChangeBatch>> TryNext() { return Next(std::chrono::milliseconds(0)); }

  // Stops the subscription: a Next waiting on another thread returns
  // FailedPrecondition. Idempotent.
  virtual void Close() = 0;
};

}  // namespace quiver

#endif  // QUIVER_CHANGE_FEED_H_
