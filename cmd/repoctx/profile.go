package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"

	"github.com/urfave/cli/v2"
)

// cpuProfile is the file the running CPU profile goes to (nil when not profiling);
// memProfile the file the heap profile will go to; traceFile the file the running
// execution trace goes to.
var cpuProfile, memProfile, traceFile *os.File

// startProfiles starts the CPU profile requested with --cpuprofile and creates the
// --memprofile file, so that a bad path fails before the command runs; and the
// execution trace requested with --trace.
func startProfiles(c *cli.Context) error {
	if p := c.String("trace"); p != "" {
		if p == c.String("cpuprofile") || p == c.String("memprofile") {
			return usagef("--trace must name a file of its own")
		}
		f, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			return fmt.Errorf("--trace: %w", err)
		}
		traceFile = f
	}
	if p := c.String("memprofile"); p != "" {
		if p == c.String("cpuprofile") {
			return usagef("--memprofile and --cpuprofile must be different files")
		}
		f, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		memProfile = f
	}
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

// stopProfiles ends the CPU profile and the execution trace and writes the heap
// profile requested with --memprofile.
func stopProfiles(c *cli.Context) error {
	if traceFile != nil {
		trace.Stop()
		if err := traceFile.Close(); err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
		traceFile = nil
	}
	if cpuProfile != nil {
		pprof.StopCPUProfile()
		if err := cpuProfile.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		cpuProfile = nil
	}
	if f := memProfile; f != nil {
		memProfile = nil
		runtime.GC()
		err := pprof.WriteHeapProfile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
	}
	return nil
}
