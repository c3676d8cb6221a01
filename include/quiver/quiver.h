// Umbrella header: everything an application needs to use Quiver.
#ifndef QUIVER_QUIVER_H_
#define QUIVER_QUIVER_H_

#include "quiver/change_feed.h"
#include "quiver/dump.h"
#include "quiver/graph.h"
#include "quiver/ids.h"
#include "quiver/logger.h"
#include "quiver/options.h"
#include "quiver/snapshot.h"
#include "quiver/status.h"
#include "quiver/traversal.h"
#include "quiver/value.h"
#include "quiver/verify.h"
#include "quiver/write_batch.h"

#endif  // QUIVER_QUIVER_H_
