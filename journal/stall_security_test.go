package journal

import (
	"os"
	"testing"
	"time"
)

// TestSecurityHugeFileDoesNotStallTheWatch: a sparse file of a terabyte
// costs a command one truncate; opening it for writing must not make the
// journal read a terabyte of zeros to hash it while every change the
// command makes waits (and mnemos run cannot end).
func TestSecurityHugeFileDoesNotStallTheWatch(t *testing.T) {
	w := newWS(t, Options{MaxFile: 1 << 20})
	f, err := os.Create(w.p("sparse"))
	w.must(err)
	w.must(f.Truncate(1 << 40))
	w.must(f.Close())
	w.begin()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- w.r.Before(Write, w.p("sparse"), "") }()
	select {
	case err := <-done:
		w.must(err)
	case <-time.After(20 * time.Second):
		t.Fatal("Before still reads the sparse file after 20 s")
	}
	sum := w.finish()
	if len(sum.NotKept) != 1 || sum.NotKept[0].Why != NotKeptTooBig {
		t.Errorf("not kept: %+v", sum.NotKept)
	}
	t.Logf("took %v", time.Since(start))
}
