#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace quiver::crashloop {
namespace {

constexpr int kChildPipeFd = 3;

Status Errno(const char* what) { return IOError(std::string(what) + ": " + std::strerror(errno)); }

}  // namespace

Result<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv) {
  // Built before fork: the child may only make async-signal-safe calls.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Errno("pipe2");
  const pid_t pid = ::fork();
  if (pid < 0) {
    Status s = Errno("fork");
    ::close(fds[0]);
    ::close(fds[1]);
    return s;
  }
  if (pid == 0) {
    // dup2 clears close-on-exec on the new descriptor; if the pipe already
    // is fd 3, clear it by hand.
    if (fds[1] == kChildPipeFd) {
      ::fcntl(kChildPipeFd, F_SETFD, 0);
    } else if (::dup2(fds[1], kChildPipeFd) < 0) {
      ::_exit(126);
    }
    ::execv("/proc/self/exe", args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  return ChildProcess(pid, fds[0]);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      fd_(std::exchange(other.fd_, -1)),
      reaped_(other.reaped_),
      wait_status_(other.wait_status_),
      splitter_(std::move(other.splitter_)) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    ChildLog ignored;
    KillAndDrain(&ignored);
  }
  if (fd_ >= 0) ::close(fd_);
}

bool ChildProcess::ReadSome(ChildLog* log) {
  char buf[8192];
  ssize_t n;
  do {
    n = ::read(fd_, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  splitter_.Feed(std::string_view(buf, static_cast<std::size_t>(n)), log);
  return true;
}

ChildProcess::Event ChildProcess::Wait(Clock::time_point deadline, ChildLog* log) {
  while (true) {
    const auto left = std::max(deadline - Clock::now(), Clock::duration::zero());
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    const timespec timeout{static_cast<time_t>(ns / 1'000'000'000),
                           static_cast<decltype(timespec::tv_nsec)>(ns % 1'000'000'000)};
    pollfd p{fd_, POLLIN, 0};
    const int r = ::ppoll(&p, 1, &timeout, nullptr);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return Event::kDeadline;  // a poll error also hands control back
    return ReadSome(log) ? Event::kData : Event::kEndOfFile;
  }
}

int ChildProcess::KillAndDrain(ChildLog* log) {
  if (reaped_) return wait_status_;
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, &wait_status_, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  while (ReadSome(log)) {
  }
  return wait_status_;
}

}  // namespace quiver::crashloop
