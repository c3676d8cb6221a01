// quiver::Import, quiver::ImportNewGraph and quiver::Export (include/quiver/import.h) on the
// operating system's file system.
#include <new>

#include "import/exporter.h"
#include "import/importer.h"
#include "quiver/import.h"

namespace quiver {

// No exception crosses the API: building the importer (its copy of the
// spec) may run out of memory too.
Result<ImportStats> Import(Graph& graph, const ImportSpec& spec, const ImportOptions& options) {
  try {
    import::Importer importer(env::PosixFileSystem(), graph, spec, options);
    return importer.Run();
  } catch (const std::bad_alloc&) {
    return import::ImportOutOfMemory();
  }
}

Result<ImportStats> ImportNewGraph(std::string_view dir, const ImportSpec& spec,
                                   const ImportOptions& options) {
  try {
    import::Importer importer(env::PosixFileSystem(), std::string(dir), spec, options);
    return importer.Run();
  } catch (const std::bad_alloc&) {
    return import::ImportOutOfMemory();
  }
}

Result<ExportStats> Export(const Snapshot& snapshot, std::string_view dir, const ExportOptions& options) {
  try {
    return import::RunExport(env::PosixFileSystem(), snapshot, std::string(dir), options);
  } catch (const std::bad_alloc&) {  // the path or an argument check's message; nothing was created
    return import::ExportOutOfMemory();
  }
}

}  // namespace quiver
