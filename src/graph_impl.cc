#include "graph_impl.h"

#include <new>

#include "base/strings.h"

namespace quiver {

// Builds Snapshot handles; the only friend of Snapshot's private constructor.
class SnapshotInternal {
 public:
  static Snapshot Make(const internal::Version* v) { return Snapshot(v); }
};

Graph::~Graph() = default;

Result<std::unique_ptr<Graph>> Graph::Open(const Options& options, std::string_view dir) {
  if (options.durability == Durability::kVolatile) return OpenInMemory(options);
  return UnimplementedError(base::StrCat("durable mode (write-ahead log and checkpoints) is not available in this ",
                                         "build; open '", dir, "' with Durability::kVolatile or use OpenInMemory"));
}

Result<std::unique_ptr<Graph>> Graph::OpenInMemory(const Options& options) {
  Options o = options;
  o.durability = Durability::kVolatile;
  if (o.writer.max_queued_batches == 0 || o.writer.max_group_batches == 0)
    return InvalidArgumentError("writer queue and group bounds must be at least 1");
  return std::unique_ptr<Graph>(new GraphImpl(o));
}

GraphImpl::GraphImpl(const Options& options)
    : options_(options),
      chain_(new storage::VersionChain()),
      queue_(options.writer.max_queued_batches, options.writer.spin_microseconds),
      processor_(options.limits),
      writer_([this] { WriterLoop(); }) {}

GraphImpl::~GraphImpl() {
  Close().IgnoreError();
  chain_->Shutdown();
}

Snapshot GraphImpl::GetSnapshot() const { return SnapshotInternal::Make(chain_->Acquire()); }

Result<CommitInfo> GraphImpl::Write(WriteBatch batch) {
  auto* r = new WriteRequest(std::move(batch), /*async=*/false);
  Status s = queue_.Push(r);
  if (!s.ok()) {
    delete r;
    return s;
  }
  return r->Wait(options_.writer.spin_microseconds);
}

std::future<Result<CommitInfo>> GraphImpl::WriteAsync(WriteBatch batch) {
  auto* r = new WriteRequest(std::move(batch), /*async=*/true);
  std::future<Result<CommitInfo>> f = r->future();
  Status s = queue_.Push(r);
  if (!s.ok()) r->Complete(std::move(s));
  return f;
}

Status GraphImpl::Close() {
  std::call_once(close_once_, [this] {
    queue_.Close();
    writer_.join();  // the writer drains what was queued before Close
  });
  return Status::Ok();
}

MemoryStats GraphImpl::GetMemoryStats() const {
  storage::ChainStats c = chain_->Stats();
  MemoryStats m;
  m.allocated_bytes = static_cast<std::uint64_t>(chain_->account()->allocated_bytes());
  m.retired_bytes = c.retired_bytes;
  m.live_versions = c.live_versions;
  return m;
}

void GraphImpl::WriterLoop() {
  std::vector<WriteRequest*> group;
  while (queue_.PopGroup(&group, options_.writer.max_group_batches, options_.writer.max_group_ops)) {
    CommitGroup(group);
    group.clear();
  }
}

void GraphImpl::CommitGroup(const std::vector<WriteRequest*>& group) {
  if (poisoned_) {
    for (WriteRequest* r : group)
      r->Complete(Status(StatusCode::kPoisoned, "an earlier failure stopped all writes to this graph"));
    return;
  }
  storage::MutationContext ctx{++epoch_, nullptr, nullptr};
  storage::Version* v = chain_->NewVersion(&ctx);
  std::vector<Result<CommitInfo>> results;
  results.reserve(group.size());
  bool changed = false;
  try {
    for (WriteRequest* r : group) {
      Status s = processor_.Validate(r->batch(), v->roots);
      if (!s.ok()) {
        results.emplace_back(std::move(s));
        continue;
      }
      CommitInfo info;
      processor_.Apply(r->batch(), v->roots, ctx, &info);
      info.sequence = ++v->roots.sequence;
      results.emplace_back(std::move(info));
      changed = true;
    }
  } catch (const std::bad_alloc&) {
    // The version is half-built; abandon it (its private blocks leak) and
    // refuse further writes rather than publish a partial group.
    poisoned_ = true;
    for (WriteRequest* r : group)
      r->Complete(ResourceExhaustedError("out of memory while applying a commit group; writes are stopped"));
    return;
  }
  if (changed) {
    chain_->Publish(v);  // invariants 2 and 3: the whole group, in order
  } else {
    chain_->Discard(v);
  }
  for (std::size_t i = 0; i < group.size(); ++i) group[i]->Complete(std::move(results[i]));
}

}  // namespace quiver
