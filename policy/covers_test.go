package policy

import "testing"

func TestCoversEverything(t *testing.T) {
	for target, want := range map[string]bool{
		"/": true, "/**": true, "*": true, "**": true, "/*": true, "/*/**": true, "//**/**": true, "?": true,
		"/proj/**": false, "/home/*/**": false, "example.com": false, "/tmp": false, "a": false,
	} {
		if got := CoversEverything(target); got != want {
			t.Errorf("CoversEverything(%q) = %v, want %v", target, got, want)
		}
	}
}
