package classify

import (
	"math/rand"
	"path"
	"reflect"
	"testing"
	"testing/quick"
)

// TestJoinCleanIsPathJoin: the shortcut joinClean takes for clean paths
// gives what path.Join gives, for any directory and relative path.
func TestJoinCleanIsPathJoin(t *testing.T) {
	for _, c := range [][2]string{{"/", "a"}, {"/a", "b/c"}, {"/a/", "b"}, {"/a", "./b"}, {"/a", "../b"}, {"/a", "b/"},
		{"/a", "."}, {"/a", ".."}, {"/a", ""}, {"/a", "b//c"}, {"/a/./b", "c"}, {"a", "b"}, {"", "b"}, {"/a", ".b"}, {"/a", "..b/c"}} {
		if got, want := joinClean(c[0], c[1]), path.Join(c[0], c[1]); got != want {
			t.Errorf("joinClean(%q, %q) = %q, want %q", c[0], c[1], got, want)
		}
	}
	f := func(dir, rel string) bool { return joinClean(dir, rel) == path.Join(dir, rel) }
	if err := quick.Check(f, &quick.Config{MaxCount: 50000, Values: func(v []reflect.Value, r *rand.Rand) {
		const alphabet = "/./ab"
		for k := range v {
			b := make([]byte, r.Intn(10))
			for i := range b {
				b[i] = alphabet[r.Intn(len(alphabet))]
			}
			v[k] = reflect.ValueOf(string(b))
		}
	}}); err != nil {
		t.Error(err)
	}
}

// TestWithinCleanIsWithin: WithinClean on a directory cleaned once
// answers what Within answers.
func TestWithinCleanIsWithin(t *testing.T) {
	f := func(dir, target string) bool {
		dir, target = "/"+dir, "/"+target
		return WithinClean(path.Clean(dir), target) == Within(dir, target) &&
			WithinClean(path.Clean(dir), target[1:]) == Within(dir, target[1:])
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 50000, Values: func(v []reflect.Value, r *rand.Rand) {
		const alphabet = "/./ab"
		for k := range v {
			b := make([]byte, r.Intn(10))
			for i := range b {
				b[i] = alphabet[r.Intn(len(alphabet))]
			}
			v[k] = reflect.ValueOf(string(b))
		}
	}}); err != nil {
		t.Error(err)
	}
}
