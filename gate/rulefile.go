package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/policy"
)

// AppendAllowRule adds an argv_prefix allow rule to the user's policy file
// (writing the default policy first when there is none), pinned to what
// the approved command ran with when pin is not empty (policy.Rule.Pin).
// The new file is validated, then replaces the old one atomically; on any
// error the old file is untouched.
func AppendAllowRule(file string, prefix []string, pin, approval string, now time.Time) (AddedRule, error) {
	rs, err := AppendAllowRules(file, []plannedRule{{prefix: prefix, pin: pin}}, approval, now)
	if err != nil {
		return AddedRule{}, err
	}
	return rs[0], nil
}

// AppendAllowRules is AppendAllowRule for the rules one approval
// remembers, written in one edit.
func AppendAllowRules(file string, rules []plannedRule, approval string, now time.Time) ([]AddedRule, error) {
	src, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	day := now.UTC().Format("2006-01-02")
	rs := make([]policy.RememberedRule, len(rules))
	out := make([]AddedRule, len(rules))
	for i, r := range rules {
		words := strings.Join(r.prefix, " ")
		if r.exact {
			words += " (exactly)"
		}
		name := fmt.Sprintf("allow %s (approval %s, %s)", words, approval, day)
		rs[i] = policy.RememberedRule{Name: name, ArgvPrefix: r.prefix, Pin: r.pin, Exact: r.exact}
		out[i] = AddedRule{Name: name, ArgvPrefix: r.prefix, Exact: r.exact, Pin: r.pin, File: file}
	}
	data, err := policy.AddRememberedRules(file, src, rs)
	if err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(file, data, 0o600); err != nil {
		return nil, err
	}
	return out, nil
}

// WriteFileAtomic writes data to a temporary file beside file and renames
// it into place, so readers see the old or the new content, never a part.
func WriteFileAtomic(file string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".policy-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
