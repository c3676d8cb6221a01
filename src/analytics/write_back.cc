// WriteVertexProperty: results of a kernel written back as vertex properties,
// in batches so one huge batch never holds the writer (and the WAL group)
// for the whole graph.
#include <cmath>
#include <string>

#include "quiver/analytics.h"
#include "quiver/graph.h"
#include "quiver/write_batch.h"

namespace quiver {

namespace {

template <typename T>
Result<std::uint64_t> WriteValues(Graph& graph, const Projection& p, std::string_view key,
                                  std::span<const T> values, const WriteBackOptions& options) {
  if (values.size() != p.vertex_count())
    return InvalidArgumentError("WriteVertexProperty: " + std::to_string(values.size()) + " values for " +
                                std::to_string(p.vertex_count()) + " vertices");
  if (key.empty()) return InvalidArgumentError("WriteVertexProperty: empty key");
  const std::size_t per_batch = options.batch_vertices == 0 ? 1 : options.batch_vertices;
  std::uint64_t written = 0;
  for (std::size_t begin = 0; begin < values.size(); begin += per_batch) {
    const std::size_t end = std::min(values.size(), begin + per_batch);
    WriteBatch batch;
    for (std::size_t i = begin; i < end; ++i) {
      const VertexId v = p.ToVertexId(static_cast<std::uint32_t>(i));
      if constexpr (std::is_floating_point_v<T>) {
        if (!std::isfinite(values[i])) {
          batch.RemoveProperty(v, key);
          continue;
        }
      }
      batch.SetProperty(v, key, PropertyValue(values[i]));
    }
    Result<CommitInfo> r = graph.Write(std::move(batch));
    if (!r.ok()) return r.status();
    written += end - begin;
  }
  return written;
}

}  // namespace

Result<std::uint64_t> WriteVertexProperty(Graph& graph, const Projection& p, std::string_view key,
                                          std::span<const double> values, const WriteBackOptions& options) {
  return WriteValues(graph, p, key, values, options);
}

Result<std::uint64_t> WriteVertexProperty(Graph& graph, const Projection& p, std::string_view key,
                                          std::span<const std::int64_t> values,
                                          const WriteBackOptions& options) {
  return WriteValues(graph, p, key, values, options);
}

}  // namespace quiver
