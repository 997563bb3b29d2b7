package vaglio

import (
	"testing"

	"github.com/mnemos-dev/mnemos/shellparse"
)

// TestExclusionRoles: the values of exclusion options are patterns, and
// nothing else is.
func TestExclusionRoles(t *testing.T) {
	for _, tc := range []struct {
		line    string
		pattern []int // indexes in argv (0 is the program) of the patterns
	}{
		{"tar czf src.tgz --exclude=.env .", []int{3}},
		{"tar --exclude .env -czf a.tgz .", []int{2}},
		{"tar --exclude-from .env -czf a.tgz .", nil},
		{"tar -X .env -czf a.tgz .", nil},
		{"tar czf a.tgz -- --exclude=.env", nil},
		{"tar czf a.tgz @--exclude=$X .env", nil},
		{"tar czf a.tgz --exclude @$X", nil},
		{"rsync -a --exclude .env ./ /tmp/d/", []int{3}},
		{"rsync -a --exclude=.env --exclude-from=x ./ /tmp/d/", []int{2}},
		{"rsync -a -f '- .env' --filter=exclude_.ssh ./ d/", []int{3, 4}},
		{"rsync -a -f '+ .env' --filter='-! .env' --filter=merge_.env ./ d/", nil},
		{"zip -r app.zip . -x .env '*.log' -q", []int{5, 6}},
		{"zip -r app.zip . -x@.env -x.env", []int{5}},
		{"7z a a.7z . -xr!.env -x!.ssh -xr-!x -x@.env", []int{4, 5, 6}},
		{"rg -g !.env -g .env -g!.ssh --glob=!x --iglob !y TODO", []int{2, 5, 6, 8}},
		{"grep -r TODO --exclude=.env --exclude-dir .ssh --include=.npmrc .", []int{3, 5}},
		{"grep -r --exclude-from .env TODO .", nil},
		{"ag --ignore .env --ignore-dir=.ssh TODO", []int{2, 3}},
		{"git add -A -- . :(exclude).env :!.env :^.env :/!.env :(top,exclude).env", []int{5, 6, 7, 8, 9}},
		{"git add -- :(top).env :/.env :.env .env", nil},
		{"git log -S x -- :!.env", []int{5}},
	} {
		argv := words(tc.line)
		roles := argRoles(baseName(argv[0].Value), argv, nil)
		want := map[int]bool{}
		for _, i := range tc.pattern {
			want[i] = true
		}
		for i := 1; i < len(argv); i++ {
			got := roles != nil && roles[i-1] == rolePattern
			if got != want[i] {
				t.Errorf("%s: word %d (%q) pattern=%v, want %v", tc.line, i, argv[i].Value, got, want[i])
			}
		}
	}
}

// TestZipListEnd: a lone "@" ends zip's list of exclusions.
func TestZipListEnd(t *testing.T) {
	argv := words("zip -r app.zip . -x .env")
	argv = append(argv, shellparse.Word{Value: "@"}, shellparse.Word{Value: ".env"})
	roles := argRoles("zip", argv, nil)
	if roles == nil || roles[4] != rolePattern || roles[5] == rolePattern || roles[6] != rolePath {
		t.Errorf("roles %v", roles)
	}
}

// TestCheckIgnoreRoles: git check-ignore matches names against the ignore
// rules and opens none of them.
func TestCheckIgnoreRoles(t *testing.T) {
	argv := words("git check-ignore -v .env @$F")
	roles := argRoles("git", argv, nil)
	if roles == nil || roles[2] != roleMeta || roles[1] != rolePath || roles[3] != rolePath {
		t.Errorf("roles %v", roles)
	}
}

// TestJqFilterRoles: a jq or yq filter is text ("jq .env f.json" reads a
// key), the files it is given stay paths, and a yq filter that loads a
// file stays a path.
func TestJqFilterRoles(t *testing.T) {
	for _, tc := range []struct {
		line string
		text []int // indexes in argv (0 is the program) of the text words
	}{
		{"jq .env f.json", []int{1}},
		{"jq -r .env.NODE_ENV config.json", []int{2}},
		{"jq . .env", []int{1}},
		{"jq -f .env x.json", nil},
		{"jq --arg v .env .a x.json", []int{2, 3, 4}},
		{"jq --rawfile k .env .a", []int{2, 4}},
		{"jq -n $ARGS --args .env", []int{2, 4}},
		{"yq .env docker-compose.yml", []int{1}},
		{"yq e .env x.yml", []int{1, 2}},
		{"yq -o json .a .env", []int{2, 3}},
		{"yq -n load_str(\"/home/u/.ssh/id_rsa\")", nil},
	} {
		argv := words(tc.line)
		roles := argRoles(baseName(argv[0].Value), argv, nil)
		want := map[int]bool{}
		for _, i := range tc.text {
			want[i] = true
		}
		for i := 1; i < len(argv); i++ {
			got := roles != nil && roles[i-1] == roleText
			if got != want[i] {
				t.Errorf("%s: argument %d (%s) text = %v, want %v", tc.line, i, argv[i].Value, got, want[i])
			}
		}
	}
}
