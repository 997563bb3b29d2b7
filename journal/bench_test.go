package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkBeforeKeep1MiB: keeping a 1 MiB file before it is written
// (read, hashed, copied into the store, entry written).
func BenchmarkBeforeKeep1MiB(b *testing.B) {
	dir := b.TempDir()
	j, _ := Open(Options{Dir: filepath.Join(dir, "journal")})
	defer j.Close()
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	data := make([]byte, 1<<20)
	f := filepath.Join(ws, "f")
	b.SetBytes(1 << 20)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		data[0], data[1] = byte(i), byte(i>>8) // a new content each time
		os.WriteFile(f, data, 0o644)
		r, _ := j.Begin(RunInfo{Workspace: ws})
		b.StartTimer()
		if err := r.Before(Write, f, ""); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		r.Finish()
		b.StartTimer()
	}
}

// BenchmarkBeforeKeep1MiBInRun: the same, in a run whose log exists
// already (each iteration a new file).
func BenchmarkBeforeKeep1MiBInRun(b *testing.B) {
	dir := b.TempDir()
	j, _ := Open(Options{Dir: filepath.Join(dir, "journal")})
	defer j.Close()
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	r, _ := j.Begin(RunInfo{Workspace: ws})
	defer r.Finish()
	r.Before(Write, filepath.Join(ws, "first"), "")
	data := make([]byte, 1<<20)
	b.SetBytes(1 << 20)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		data[0], data[1], data[2] = byte(i), byte(i>>8), byte(i>>16)
		f := filepath.Join(ws, fmt.Sprintf("f%d", i))
		os.WriteFile(f, data, 0o644)
		b.StartTimer()
		if err := r.Before(Write, f, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBefore10000Creates: a run that makes 10 000 small files, each
// create recorded first (the calls themselves not counted).
func BenchmarkBefore10000Creates(b *testing.B) {
	dir := b.TempDir()
	j, _ := Open(Options{Dir: filepath.Join(dir, "journal")})
	defer j.Close()
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	names := make([]string, 10000)
	for i := range names {
		names[i] = filepath.Join(ws, fmt.Sprintf("f%05d", i))
	}
	for b.Loop() {
		r, _ := j.Begin(RunInfo{Workspace: ws})
		for _, n := range names {
			if err := r.Before(Write, n, ""); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := r.Finish(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunThatChangesNothing: Begin and Finish of a run with no
// change (the cost every command pays).
func BenchmarkRunThatChangesNothing(b *testing.B) {
	dir := b.TempDir()
	j, _ := Open(Options{Dir: filepath.Join(dir, "journal")})
	defer j.Close()
	for b.Loop() {
		r, _ := j.Begin(RunInfo{Workspace: dir})
		r.Finish()
	}
}

// BenchmarkBeforeUnlink4000: a checkout's work: 4 000 files of 16 KiB
// each kept before it is deleted, in one run.
func BenchmarkBeforeUnlink4000(b *testing.B) {
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		j, _ := Open(Options{Dir: filepath.Join(dir, "journal"), Quota: DefaultQuota, MaxFile: DefaultMaxFile})
		ws := filepath.Join(dir, "ws")
		os.Mkdir(ws, 0o755)
		data := make([]byte, 16<<10)
		for i := range 4000 {
			data[0], data[1], data[2] = byte(i), byte(i>>8), 'x'
			os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d", i)), data, 0o644)
		}
		r, _ := j.Begin(RunInfo{Workspace: ws})
		b.StartTimer()
		for i := range 4000 {
			p := filepath.Join(ws, fmt.Sprintf("f%d", i))
			if err := r.Before(Unlink, p, ""); err != nil {
				b.Fatal(err)
			}
			os.Remove(p)
		}
		r.Finish()
		b.StopTimer()
		j.Close()
		b.StartTimer()
	}
}
