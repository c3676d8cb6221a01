// NoNewThreads: makes thread creation fail for a scope, as when the process
// is at its thread or memory limit.
#ifndef QUIVER_TESTS_NO_NEW_THREADS_H_
#define QUIVER_TESTS_NO_NEW_THREADS_H_

#include <pthread.h>

#include <cstddef>
#include <system_error>
#include <thread>

namespace quiver::test_util {

// Makes every thread started while it lives fail to start (pthread_create
// cannot map a stack of 2^60 bytes), as when the process is at its thread
// or memory limit.
class NoNewThreads {
 public:
  NoNewThreads() {
    pthread_getattr_default_np(&saved_);
    pthread_attr_t huge;
    pthread_attr_init(&huge);
    pthread_attr_setstacksize(&huge, std::size_t{1} << 60);
    ok_ = pthread_setattr_default_np(&huge) == 0;
    pthread_attr_destroy(&huge);
  }
  ~NoNewThreads() {
    pthread_setattr_default_np(&saved_);
    pthread_attr_destroy(&saved_);
  }
  bool ok() const { return ok_; }
  // True if a thread started now fails to start: the guard works here.
  static bool Blocking() {
    try {
      std::thread([] {}).join();
    } catch (const std::system_error&) {
      return true;
    }
    return false;
  }

 private:
  pthread_attr_t saved_;
  bool ok_ = false;
};

}  // namespace quiver::test_util

#endif  // QUIVER_TESTS_NO_NEW_THREADS_H_
