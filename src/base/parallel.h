// Fork-join helpers for the few places that use more than one thread for
// one job (loading a checkpoint, encoding one, building an index).
//
// Thread safety: RunOnThreads may be called from any thread; `fn` runs
// concurrently on every worker and must synchronise what it shares.
#ifndef QUIVER_BASE_PARALLEL_H_
#define QUIVER_BASE_PARALLEL_H_

#include <cstdint>
#include <functional>

namespace quiver::base {

// The thread count an `io_threads`-style option asks for: `requested`, or
// when 0 one per CPU this process may use (AvailableCpus), at most 8;
// always at least 1.
unsigned ResolveThreads(std::uint32_t requested);

// Runs fn(0) .. fn(threads - 1) concurrently, fn(0) on the calling thread,
// and returns once all have returned. Workers whose thread cannot be
// started run on the calling thread after fn(0), one after the other, so
// `fn` must not wait for another worker. An exception thrown by any worker
// (std::bad_alloc, say) is rethrown here after every worker has finished.
void RunOnThreads(unsigned threads, const std::function<void(unsigned worker)>& fn);

// Lowers the calling thread's CPU priority by `steps` nice steps (its nice
// value becomes at most 19), so that it yields its core to the process's
// normal threads: a checkpoint's encoders give way to a committing thread
// woken by its fdatasync. Linux only (setpriority on the thread's id);
// elsewhere, and if the call fails, the thread keeps its priority. A thread
// cannot raise its priority back without privileges, so call it only on a
// thread that ends with its job.
void LowerThisThreadPriority(std::uint32_t steps);

// The calling thread's nice value (0 where it cannot be read).
int ThisThreadNice();

// Runs fn() on a thread of its own that first lowers itself by `nice` steps
// (LowerThisThreadPriority), and returns once it has returned: the calling
// thread (a user's, which must keep its priority) only waits, and threads
// fn starts inherit the lowered priority. With `nice` 0, or if no thread can
// be started (whatever starting it threw), fn runs on the calling thread.
// An exception fn throws is rethrown here.
void RunInBackground(std::uint32_t nice, const std::function<void()>& fn);

}  // namespace quiver::base

#endif  // QUIVER_BASE_PARALLEL_H_
