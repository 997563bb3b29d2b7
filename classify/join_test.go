package classify

import (
	"math/rand"
	"path"
	"reflect"
	"strings"
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

// withinLongWay is what Within promises, the long way: both paths
// absolute, the target cleaned is the directory cleaned or below it.
func withinLongWay(dir, target string) bool {
	if !path.IsAbs(dir) || !path.IsAbs(target) {
		return false
	}
	dir, target = path.Clean(dir), path.Clean(target)
	return dir == "/" || target == dir || strings.HasPrefix(target, dir+"/")
}

// TestWithinCleanIsWithin: Within, and WithinClean on a directory cleaned
// once, answer what the long way answers.
func TestWithinCleanIsWithin(t *testing.T) {
	for _, c := range [][2]string{{"/a", "/a/../x"}, {"/a/b", "/a/./b/c"}, {"/a/b", "/a/b/c/.."}, {"/a/b", "/x/../a/b"},
		{"/a/b", "/a/bc"}, {"/a/b", "/a//b"}, {"/", "/x"}, {"/a", "a"}, {"/a", "/a/"}, {"/a", "/a/b/../../a/c"},
		{"/a/b/c", "/a/./b/c/d"}, {"/a/b/c", "/a/b//c"}, {"/a/b/c", "/x/../a/b/c/d"}, {"/a/b/c", "/a/b/x/../c"}} {
		if got, want := WithinClean(c[0], c[1]), withinLongWay(c[0], c[1]); got != want {
			t.Errorf("WithinClean(%q, %q) = %v, want %v", c[0], c[1], got, want)
		}
	}
	f := func(dir, target string) bool {
		dir, target = "/"+dir, "/"+target
		for _, tg := range []string{target, target[1:], path.Clean(dir) + target} {
			want := withinLongWay(dir, tg)
			if WithinClean(path.Clean(dir), tg) != want || Within(dir, tg) != want {
				return false
			}
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 100000, Values: func(v []reflect.Value, r *rand.Rand) {
		const alphabet = "/./abc"
		for k := range v {
			b := make([]byte, r.Intn(14))
			for i := range b {
				b[i] = alphabet[r.Intn(len(alphabet))]
			}
			v[k] = reflect.ValueOf(string(b))
		}
	}}); err != nil {
		t.Error(err)
	}
}
