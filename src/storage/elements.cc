#include "storage/elements.h"

#include <limits>

#include "index/catalog.h"
#include "storage/adjacency.h"
#include "storage/packed_adjacency.h"

namespace quiver::storage {

void DestroyGraph(GraphRoots& g, base::MemoryAccount* account) {
  PackedBlockFreer packed(account);  // slots are visited leaf by leaf, in id order
  VertexTable::Destroy(g.vertices, g.vertex_limit, account, [account, &packed](VertexSlot& s) {
    if (s.label == kDeadLabel) return;
    packed.Visit(s);
    FreeAdjacency(s.out_head, account);
    FreeAdjacency(s.in_head, account);
    account->Free(s.props);
  });
  EdgeTable::Destroy(g.edges, g.edge_limit, account, [](EdgeSlot&) {});
  EdgePropTable::Destroy(g.edge_props, std::numeric_limits<std::uint64_t>::max(), account,
                         [account](PropBlock*& p) { account->Free(p); });
  delete g.labels;
  delete g.types;
  delete g.keys;
  index::Catalog::Destroy(g.catalog, account);
  g = GraphRoots{};
}

}  // namespace quiver::storage
