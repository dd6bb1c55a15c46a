package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/urfave/cli/v2"
)

// cpuProfile is the file the running CPU profile goes to (nil when not profiling).
var cpuProfile *os.File

// startProfiles starts the CPU profile requested with --cpuprofile.
func startProfiles(c *cli.Context) error {
	path := c.String("cpuprofile")
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	cpuProfile = f
	return nil
}

// stopProfiles ends the CPU profile and writes the heap profile requested with --memprofile.
func stopProfiles(c *cli.Context) error {
	if cpuProfile != nil {
		pprof.StopCPUProfile()
		if err := cpuProfile.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		cpuProfile = nil
	}
	if path := c.String("memprofile"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		runtime.GC()
		err = pprof.WriteHeapProfile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
	}
	return nil
}
