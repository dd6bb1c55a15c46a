package csharp_test

// The tests of this package parse with the registered specs, which need this
// package's rules attached: package languages does that in its init (the test binary
// runs it before any test).
import _ "github.com/repoctx/repoctx/languages"
