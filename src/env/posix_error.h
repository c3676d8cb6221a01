// PosixError: how PosixFileSystem turns an errno into a Status. Declared
// here (defined in posix_file_system.cc) so the mapping can be tested for
// errors a test cannot provoke portably, such as ENOSPC.
#ifndef QUIVER_ENV_POSIX_ERROR_H_
#define QUIVER_ENV_POSIX_ERROR_H_

#include <string>
#include <string_view>

#include "quiver/status.h"

namespace quiver::env {

// ENOSPC -> ResourceExhausted("no space left on device: <path>");
// ENOENT -> NotFound, EEXIST -> AlreadyExists, anything else -> IOError, each
// with the message "<call> <path>: <strerror(err)>". `err` must not be 0.
Status PosixError(std::string_view call, const std::string& path, int err);

}  // namespace quiver::env

#endif  // QUIVER_ENV_POSIX_ERROR_H_
