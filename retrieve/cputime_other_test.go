//go:build !unix

package retrieve

import "time"

// cpuTime is not available on this platform; benchmarks then report 0 cpu-ns/op.
func cpuTime() time.Duration { return 0 }
