package symbols

import "testing"

// TestSwiftModule: a Swift file's module folder is the one below the deepest Sources
// or Tests folder above it, else its top folder.
func TestSwiftModule(t *testing.T) {
	for p, want := range map[string]string{
		"Sources/ShopKit/Money.swift":         "Sources/ShopKit",
		"Sources/ShopKit/Sub/Deep.swift":      "Sources/ShopKit",
		"Tests/ShopKitTests/MoneyTests.swift": "Tests/ShopKitTests",
		"pkg/a/Sources/Lib/X.swift":           "pkg/a/Sources/Lib",
		"Sources/main.swift":                  "Sources",
		"App/View.swift":                      "App",
		"main.swift":                          "",
		"Sources/Sources/Inner/Weird.swift":   "Sources/Sources/Inner",
	} {
		if got := swiftModule(p); got != want {
			t.Errorf("swiftModule(%q) = %q, want %q", p, got, want)
		}
	}
}
