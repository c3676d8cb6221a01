// ChildProcess: one crash-loop child, started with fork + exec of this
// executable, its protocol pipe, and the SIGKILL that ends it.
//
// The pipe's write end becomes the child's fd 3; the parent keeps the read
// end (close-on-exec, so no later child inherits it). Reading the pipe while
// the child runs keeps it from blocking on a full pipe.
//
// Thread safety: single-threaded. Spawn must be called while the process
// has no other threads that could hold locks across fork (the driver closes
// every graph first); the child only calls dup2/fcntl/execv before exec.
#ifndef QUIVER_TOOLS_CRASHLOOP_CHILD_PROCESS_H_
#define QUIVER_TOOLS_CRASHLOOP_CHILD_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "child_log.h"
#include "quiver/status.h"

namespace quiver::crashloop {

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts `argv` (argv[0] is only the name shown in ps; the program is
  // /proc/self/exe). Errors: IOError if pipe, fork or exec setup fails.
  static Result<ChildProcess> Spawn(const std::vector<std::string>& argv);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Kills and reaps a child still running.
  ~ChildProcess();

  enum class Event { kDeadline, kData, kEndOfFile };
  // Waits until the child writes or `deadline` passes; reads what arrived
  // into `log`. kEndOfFile once the child has exited (or closed the pipe).
  Event Wait(Clock::time_point deadline, ChildLog* log);

  // SIGKILL, reap, then read the rest of the pipe: every line the child
  // wrote before it died. Returns the wait status. Idempotent.
  int KillAndDrain(ChildLog* log);

  pid_t pid() const { return pid_; }

 private:
  ChildProcess(pid_t pid, int read_fd) : pid_(pid), fd_(read_fd) {}
  // One read(); false at end of file.
  bool ReadSome(ChildLog* log);

  pid_t pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
  int wait_status_ = 0;
  LineSplitter splitter_;
};

}  // namespace quiver::crashloop

#endif  // QUIVER_TOOLS_CRASHLOOP_CHILD_PROCESS_H_
