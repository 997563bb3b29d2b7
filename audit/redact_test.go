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
