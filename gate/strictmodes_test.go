//go:build unix

package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tests play a user (uid 1000, "u") and chown files to another user
// (65534, "nobody"); only root may chown, so without root they skip.
const (
	testUser    = 1000
	testForeign = 65534
)

func testNames(uid int) string {
	switch uid {
	case 0:
		return "root"
	case testUser:
		return "u"
	case testForeign:
		return "nobody"
	}
	return ""
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
}

// fsEntry is a file, directory or link a test lays out below its root.
type fsEntry struct {
	path  string // relative to the root
	dir   bool
	link  string // the link's target, relative to the root
	mode  os.FileMode
	owner int // -1: leave as created (root)
}

func layOut(t *testing.T, root string, entries []fsEntry) {
	t.Helper()
	for _, e := range entries {
		p := filepath.Join(root, e.path)
		var err error
		switch {
		case e.dir:
			err = os.Mkdir(p, 0o700)
		case e.link != "":
			err = os.Symlink(filepath.Join(root, e.link), p)
		default:
			err = os.WriteFile(p, []byte("level: readonly\n"), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.link == "" {
			// Chmod sets the special bits that Mkdir and umask leave out.
			if err := os.Chmod(p, e.mode); err != nil {
				t.Fatal(err)
			}
		}
		if e.owner >= 0 {
			if err := os.Lchown(p, e.owner, -1); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSecurityStrictModesRefusesUnsafePolicies: a policy file (or the
// directory holding it, or a link to it) that another user owns or others
// may write is refused, with the command that fixes it.
func TestSecurityStrictModesRefusesUnsafePolicies(t *testing.T) {
	needRoot(t)
	const fileMode, dirMode = 0o600, 0o700
	tests := []struct {
		name    string
		entries []fsEntry // below the root; "d" holds the policy "d/p.yaml"
		file    string    // the file checked, relative to the root
		want    []string  // each problem: "path problem", path relative
		fix     string    // the hint, paths relative to the root
	}{
		{
			name:    "own file 0600",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser}, {path: "d/p.yaml", mode: fileMode, owner: testUser}},
		},
		{
			name:    "own file 0644",
			entries: []fsEntry{{path: "d", dir: true, mode: 0o755, owner: testUser}, {path: "d/p.yaml", mode: 0o644, owner: testUser}},
		},
		{
			name:    "root-owned file and directory",
			entries: []fsEntry{{path: "d", dir: true, mode: 0o755, owner: 0}, {path: "d/p.yaml", mode: 0o644, owner: 0}},
		},
		{
			name:    "missing file",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser}},
		},
		{
			name:    "SecurityForeignOwnedPolicyIsRefused",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser}, {path: "d/p.yaml", mode: fileMode, owner: testForeign}},
			want:    []string{"d/p.yaml is owned by nobody (uid 65534)"},
			fix:     "sudo chown u d/p.yaml",
		},
		{
			name:    "SecurityWorldWritablePolicyIsRefused",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser}, {path: "d/p.yaml", mode: 0o666, owner: testUser}},
			want:    []string{"d/p.yaml is writable by its group and others (mode 0666)"},
			fix:     "chmod go-w d/p.yaml",
		},
		{
			name:    "SecurityOthersWritablePolicyIsRefused",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser}, {path: "d/p.yaml", mode: 0o602, owner: testUser}},
			want:    []string{"d/p.yaml is writable by others (mode 0602)"},
			fix:     "chmod go-w d/p.yaml",
		},
		{
			name:    "SecurityGroupWritablePolicyIsRefused",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser}, {path: "d/p.yaml", mode: 0o620, owner: testUser}},
			want:    []string{"d/p.yaml is writable by its group (mode 0620)"},
			fix:     "chmod go-w d/p.yaml",
		},
		{
			name:    "SecurityForeignOwnedWorldWritablePolicyIsRefused",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser}, {path: "d/p.yaml", mode: 0o666, owner: testForeign}},
			want:    []string{"d/p.yaml is owned by nobody (uid 65534) and writable by its group and others (mode 0666)"},
			fix:     "sudo chown u d/p.yaml && chmod go-w d/p.yaml",
		},
		{
			name:    "root-owned group-writable file needs root to fix",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser}, {path: "d/p.yaml", mode: 0o664, owner: 0}},
			want:    []string{"d/p.yaml is writable by its group (mode 0664)"},
			fix:     "sudo chmod go-w d/p.yaml",
		},
		{
			name:    "SecurityWorldWritablePolicyDirIsRefused",
			entries: []fsEntry{{path: "d", dir: true, mode: 0o777, owner: testUser}, {path: "d/p.yaml", mode: fileMode, owner: testUser}},
			want:    []string{"d is writable by its group and others (mode 0777)"},
			fix:     "chmod go-w d",
		},
		{
			name:    "SecurityForeignOwnedPolicyDirIsRefused",
			entries: []fsEntry{{path: "d", dir: true, mode: 0o755, owner: testForeign}, {path: "d/p.yaml", mode: fileMode, owner: testUser}},
			want:    []string{"d is owned by nobody (uid 65534)"},
			fix:     "sudo chown u d",
		},
		{
			// Like /tmp: nobody else can replace or remove the file.
			name:    "sticky directory holding a policy",
			entries: []fsEntry{{path: "d", dir: true, mode: 0o777 | os.ModeSticky, owner: 0}, {path: "d/p.yaml", mode: fileMode, owner: testUser}},
		},
		{
			name:    "SecurityForeignOwnedStickyDirIsRefused",
			entries: []fsEntry{{path: "d", dir: true, mode: 0o777 | os.ModeSticky, owner: testForeign}, {path: "d/p.yaml", mode: fileMode, owner: testUser}},
			want:    []string{"d is owned by nobody (uid 65534) and writable by its group and others (mode 1777)"},
			fix:     "sudo chown u d && chmod go-w d",
		},
		{
			name: "link to an own file",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser}, {path: "t", dir: true, mode: dirMode, owner: testUser},
				{path: "t/real.yaml", mode: fileMode, owner: testUser}, {path: "d/p.yaml", link: "t/real.yaml", owner: testUser}},
		},
		{
			name: "SecurityForeignOwnedPolicyLinkIsRefused",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser}, {path: "t", dir: true, mode: dirMode, owner: testUser},
				{path: "t/real.yaml", mode: fileMode, owner: testUser}, {path: "d/p.yaml", link: "t/real.yaml", owner: testForeign}},
			want: []string{"d/p.yaml is a symbolic link owned by nobody (uid 65534)"},
			fix:  "sudo chown -h u d/p.yaml",
		},
		{
			name: "SecurityLinkToForeignOwnedPolicyIsRefused",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser}, {path: "t", dir: true, mode: dirMode, owner: testUser},
				{path: "t/real.yaml", mode: fileMode, owner: testForeign}, {path: "d/p.yaml", link: "t/real.yaml", owner: testUser}},
			want: []string{"t/real.yaml (where d/p.yaml points) is owned by nobody (uid 65534)"},
			fix:  "sudo chown u t/real.yaml",
		},
		{
			name: "SecurityLinkIntoWritableDirIsRefused",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser}, {path: "t", dir: true, mode: 0o757, owner: testUser},
				{path: "t/real.yaml", mode: fileMode, owner: testUser}, {path: "d/p.yaml", link: "t/real.yaml", owner: testUser}},
			want: []string{"t is writable by others (mode 0757)"},
			fix:  "chmod go-w t",
		},
		{
			name: "dangling link",
			entries: []fsEntry{{path: "d", dir: true, mode: dirMode, owner: testUser},
				{path: "d/p.yaml", link: "t/gone.yaml", owner: testUser}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			layOut(t, root, tc.entries)
			sm := StrictModes{UID: testUser, Name: testNames}
			got := sm.CheckPolicy(filepath.Join(root, "d", "p.yaml"))
			rel := strings.NewReplacer(root+"/", "")
			var gotS []string
			for _, u := range got {
				gotS = append(gotS, rel.Replace(u.String()))
			}
			if strings.Join(gotS, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(gotS, "\n"), strings.Join(tc.want, "\n"))
			}
			if len(got) == 0 {
				return
			}
			if fix := rel.Replace((&UnsafeError{Files: got}).Hint()); fix != tc.fix {
				t.Errorf("fix %q, want %q", fix, tc.fix)
			}
		})
	}
}

// TestSecurityStrictModesRefusesUnsafeState: mnemos's own directories
// are never shared, not even sticky, and every state file is checked when
// it exists.
func TestSecurityStrictModesRefusesUnsafeState(t *testing.T) {
	needRoot(t)
	tests := []struct {
		name    string
		entries []fsEntry // "s" is the state directory
		want    []string
	}{
		{
			name: "fresh state",
			entries: []fsEntry{{path: "s", dir: true, mode: 0o700, owner: testUser}, {path: "s/secrets", dir: true, mode: 0o700, owner: testUser},
				{path: "s/secrets/state.db", mode: 0o600, owner: testUser}, {path: "s/audit.jsonl", mode: 0o600, owner: testUser}},
		},
		{name: "missing state directory"},
		{
			name:    "SecurityWorldWritableStateDirIsRefused",
			entries: []fsEntry{{path: "s", dir: true, mode: 0o777, owner: testUser}},
			want:    []string{"s is writable by its group and others (mode 0777)"},
		},
		{
			// Others could plant a WAL before the database creates one.
			name:    "SecurityStickyStateDirIsRefused",
			entries: []fsEntry{{path: "s", dir: true, mode: 0o777 | os.ModeSticky, owner: testUser}},
			want:    []string{"s is writable by its group and others (mode 1777)"},
		},
		{
			name:    "SecurityForeignOwnedStateDirIsRefused",
			entries: []fsEntry{{path: "s", dir: true, mode: 0o700, owner: testForeign}},
			want:    []string{"s is owned by nobody (uid 65534)"},
		},
		{
			name: "SecurityForeignOwnedDatabaseIsRefused",
			entries: []fsEntry{{path: "s", dir: true, mode: 0o700, owner: testUser}, {path: "s/secrets", dir: true, mode: 0o700, owner: testUser},
				{path: "s/secrets/state.db", mode: 0o600, owner: testForeign}},
			want: []string{"s/secrets/state.db is owned by nobody (uid 65534)"},
		},
		{
			name: "SecurityReadableAuditKeyIsRefused",
			entries: []fsEntry{{path: "s", dir: true, mode: 0o700, owner: testUser}, {path: "s/secrets", dir: true, mode: 0o700, owner: testUser},
				{path: "s/secrets/audit.key", mode: 0o640, owner: testUser}},
			want: []string{"s/secrets/audit.key is readable by others than its owner (mode 0640): whoever reads it can rewrite the audit log unnoticed"},
		},
		{
			name: "SecurityReadableDatabaseIsRefused",
			entries: []fsEntry{{path: "s", dir: true, mode: 0o700, owner: testUser}, {path: "s/secrets", dir: true, mode: 0o700, owner: testUser},
				{path: "s/secrets/state.db", mode: 0o644, owner: testUser}},
			want: []string{"s/secrets/state.db is readable by others than its owner (mode 0644): the state database holds the tokens that let requests through"},
		},
		{
			name:    "SecurityOpenSecretsDirIsRefused",
			entries: []fsEntry{{path: "s", dir: true, mode: 0o700, owner: testUser}, {path: "s/secrets", dir: true, mode: 0o750, owner: testUser}},
			want:    []string{"s/secrets is open to others than its owner (mode 0750): it holds mnemos's secrets (the audit key, the state database)"},
		},
		{
			name: "SecurityPlantedWALIsRefused",
			entries: []fsEntry{{path: "s", dir: true, mode: 0o700, owner: testUser}, {path: "s/secrets", dir: true, mode: 0o700, owner: testUser},
				{path: "s/secrets/state.db", mode: 0o600, owner: testUser}, {path: "s/secrets/state.db-wal", mode: 0o600, owner: testForeign},
				{path: "s/secrets/state.db-shm", mode: 0o666, owner: testUser}},
			want: []string{"s/secrets/state.db-wal is owned by nobody (uid 65534)", "s/secrets/state.db-shm is writable by its group and others (mode 0666)"},
		},
		{
			name: "SecurityWritableAuditLogIsRefused",
			entries: []fsEntry{{path: "s", dir: true, mode: 0o700, owner: testUser},
				{path: "s/audit.jsonl", mode: 0o646, owner: testUser}, {path: "s/audit.jsonl.anchor", mode: 0o620, owner: testUser},
				{path: "s/secrets", dir: true, mode: 0o700, owner: testUser}, {path: "s/secrets/audit.key", mode: 0o600, owner: testForeign}},
			want: []string{"s/audit.jsonl is writable by others (mode 0646)", "s/audit.jsonl.anchor is writable by its group (mode 0620)",
				"s/secrets/audit.key is owned by nobody (uid 65534)"},
		},
		{
			name: "SecurityAuditLogLinkedElsewhereIsChecked",
			entries: []fsEntry{{path: "s", dir: true, mode: 0o700, owner: testUser}, {path: "o", dir: true, mode: 0o777, owner: testUser},
				{path: "o/log", mode: 0o600, owner: testForeign}, {path: "s/audit.jsonl", link: "o/log", owner: testUser}},
			want: []string{"o is writable by its group and others (mode 0777)", "o/log (where s/audit.jsonl points) is owned by nobody (uid 65534)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			layOut(t, root, tc.entries)
			s := filepath.Join(root, "s")
			p, err := Locate(s, func(string) string { return "" }, "")
			if err != nil {
				t.Fatal(err)
			}
			got := StrictModes{UID: testUser, Name: testNames}.Check(p)
			rel := strings.NewReplacer(root+"/", "")
			var gotS []string
			for _, u := range got {
				gotS = append(gotS, rel.Replace(u.String()))
			}
			if strings.Join(gotS, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(gotS, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestStrictModesRunAsRoot: when mnemos runs as root, the fixes need no
// sudo, and another user's file is still refused.
func TestStrictModesRunAsRoot(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(f, testForeign, -1); err != nil {
		t.Fatal(err)
	}
	got := StrictModes{UID: 0, Name: testNames}.CheckPolicy(f)
	if len(got) != 1 || got[0].Fix != "chown root "+f+" && chmod go-w "+f {
		t.Fatalf("got %+v", got)
	}
	// Without names, uids.
	got = StrictModes{UID: 0}.CheckPolicy(f)
	if len(got) != 1 || !strings.Contains(got[0].Problem, "owned by uid 65534") || got[0].Fix != "chown 0 "+f+" && chmod go-w "+f {
		t.Fatalf("got %+v", got)
	}
}

func TestStrictModesQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/home/u/.config/mnemos/policy.yaml": "/home/u/.config/mnemos/policy.yaml",
		"/home/u/my policy.yaml":             "'/home/u/my policy.yaml'",
		"/x/it's":                            `'/x/it'\''s'`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}
