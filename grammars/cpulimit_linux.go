//go:build linux

package grammars

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadClock returns a clock of the CPU time (user and system) of the calling OS
// thread, which any thread of the process may read: the thread's CPU-time clock id,
// as glibc's pthread_getcpuclockid makes it (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)
// of the kernel's posix-timers.h: ^tid << 3 | 6). The caller must stay locked to its
// thread while it uses the clock. When the clock cannot be read, the clock is the
// wall-clock time since the call instead.
func threadClock() func() time.Duration {
	id := int32(^uint32(unix.Gettid())<<3 | 6)
	var ts unix.Timespec
	if unix.ClockGettime(id, &ts) != nil {
		return wallClock()
	}
	return func() time.Duration {
		var ts unix.Timespec
		if unix.ClockGettime(id, &ts) != nil {
			return 0 // the thread is gone: its parse is over
		}
		return time.Duration(ts.Nano())
	}
}
