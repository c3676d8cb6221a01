// Helpers of the import/export tests: files in a SimFileSystem, an import
// through the engine's Importer on it, and a canonical rendering of a
// whole graph that two graphs share exactly when their elements, ids,
// labels, types and properties (type and bits) are the same.
#ifndef QUIVER_TESTS_IMPORT_TEST_UTIL_H_
#define QUIVER_TESTS_IMPORT_TEST_UTIL_H_

#include <zlib.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "env/file_system.h"
#include "env/sim_file_system.h"
#include "gtest/gtest.h"
#include "import/exporter.h"
#include "import/importer.h"
#include "quiver/graph.h"
#include "quiver/import.h"

namespace quiver::testing_import {

inline void PutFile(env::FileSystem& fs, const std::string& path, std::string_view content) {
  auto f = fs.OpenWritable(path, env::OpenMode::kTruncate);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE((*f)->Append(env::AsBytes(content)).ok());
  ASSERT_TRUE((*f)->Close().ok());
}

// `text` as one gzip member.
inline std::string Gzip(const std::string& text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, text.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

inline std::string GetFile(env::FileSystem& fs, const std::string& path) {
  auto f = fs.OpenReadable(path);
  if (!f.ok()) return "<" + f.status().ToString() + ">";
  std::string out(static_cast<std::size_t>((*f)->Size().value()), '\0');
  auto n = (*f)->ReadAt(0, std::as_writable_bytes(std::span<char>(out.data(), out.size())));
  out.resize(n.value());
  return out;
}

inline Result<ImportStats> RunImport(env::FileSystem& fs, Graph& g, const ImportSpec& spec,
                                     const ImportOptions& options = {}) {
  import::Importer importer(&fs, g, spec, options);
  return importer.Run();
}

inline std::string RenderValue(const PropertyView& v) {
  std::string out(ValueTypeName(v.type()));
  out += ':';
  switch (v.type()) {
    case ValueType::kNull: break;
    case ValueType::kBool: out += *v.as_bool() ? "true" : "false"; break;
    case ValueType::kInt64: out += std::to_string(*v.as_int64()); break;
    case ValueType::kDouble: out += std::to_string(std::bit_cast<std::uint64_t>(*v.as_double())); break;
    case ValueType::kString: out += '"' + std::string(*v.as_string()) + '"'; break;
    case ValueType::kBytes: {
      const auto bytes = v.as_bytes();  // named: the optional must outlive the loop
      for (std::byte b : *bytes) out += std::to_string(std::to_integer<int>(b)) + ".";
      break;
    }
    case ValueType::kFloatVector: {
      const auto floats = v.as_float_vector();
      for (float f : *floats) out += std::to_string(std::bit_cast<std::uint32_t>(f)) + ";";
      break;
    }
    case ValueType::kStringList: {
      // Each element with its length, so no element text can fake a boundary.
      const StringListView list =
          *v.as_string_list();  // named: a temporary optional would die before the loop
      for (std::string_view s : list) out += std::to_string(s.size()) + '"' + std::string(s) + '"';
      break;
    }
  }
  return out;
}

template <typename Id>
std::string RenderProps(const Snapshot& s, Id id) {
  std::string out = "{";
  for (const PropertyRange::Entry& e : s.Properties(id)) {
    out += std::string(s.PropertyKeyName(e.key)) + "=" + RenderValue(e.value) + ",";
  }
  return out + "}";
}

// Every live vertex and edge, by id, with names and typed properties.
inline std::string Canonical(const Snapshot& s) {
  std::string out;
  for (VertexId v : s.Vertices()) {
    out += "v" + std::to_string(v.value()) + " " + std::string(s.LabelName(*s.LabelOf(v))) + " " +
           RenderProps(s, v) + "\n";
  }
  for (EdgeId e : s.Edges()) {
    EdgeInfo info = *s.GetEdge(e);
    out += "e" + std::to_string(e.value()) + " " + std::string(s.EdgeTypeName(info.type)) + " " +
           std::to_string(info.source.value()) + "->" + std::to_string(info.target.value()) + " " +
           RenderProps(s, e) + "\n";
  }
  return out;
}

// Exports `snap` as JSON Lines into `dir` of `fs` and imports the files
// into `into` (Quiver ids): the export either refuses with
// FailedPrecondition and leaves no file, or the import gives a graph equal
// to `snap`. `what` says what the import's failure means.
inline void ExpectJsonlRoundTripOrRefusal(env::SimFileSystem& fs, const Snapshot& snap,
                                          const std::string& dir, Graph& into, const std::string& what) {
  ExportOptions eo;
  eo.format = DataFormat::kJsonl;
  Result<ExportStats> x = import::RunExport(&fs, snap, dir, eo);
  if (!x.ok()) {
    EXPECT_EQ(x.status().code(), StatusCode::kFailedPrecondition) << x.status().ToString();
    EXPECT_FALSE(fs.Exists(dir + "/vertices.jsonl").value());
    return;
  }
  ImportOptions io;
  io.format = DataFormat::kJsonl;
  io.jsonl_id_key = "";  // no vertex holds "id": the Quiver ids were written
  Result<ImportStats> r =
      RunImport(fs, into, {.vertices = {{x->files[0], ""}}, .edges = {{x->files[1], ""}}}, io);
  ASSERT_TRUE(r.ok()) << what << ": " << r.status().ToString();
  EXPECT_EQ(Canonical(into.GetSnapshot()), Canonical(snap));
}

}  // namespace quiver::testing_import

#endif  // QUIVER_TESTS_IMPORT_TEST_UTIL_H_
