import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BIN, collect } from "../helpers/cli.js";
import { tempDir } from "../helpers/setup.js";

// `webhook-cli expect` as a CI job uses it (docs/commands/expect.md): the built binary, listen in
// the background, messages sent, and the assertions made from a real shell.
const { dir } = tempDir("webhook-cli-expect-");

const SCRIPT = `
set -u
webhook-cli() { node "$WEBHOOK_CLI_BIN" "$@"; }
wait_for() { for i in $(seq 300); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1; }
# (Background jobs of a script ignore SIGINT: SIGTERM is the stop here, sent to node itself.)
# Two receivers at once, as two parallel jobs would run them: neither's control port collides.
node "$WEBHOOK_CLI_BIN" listen --port 0 --ready-file listen.url > listen.out 2>&1 &
listen=$!
node "$WEBHOOK_CLI_BIN" listen --port 0 --ready-file other.url > other.out 2>&1 &
other=$!
# Nothing outlives the script, whatever fails in it (a stopped listen is continued, to take its SIGTERM).
trap 'kill "$listen" "$other" 2>/dev/null; kill -CONT "$listen" 2>/dev/null' EXIT
wait_for listen.url && wait_for other.url || { echo "no ready file"; exit 9; }
[ "$(sed -n 2p listen.url)" != "$(sed -n 2p other.url)" ] && echo "control ports differ"
kill -TERM "$other"; wait "$other"
url="$(head -1 listen.url)"
webhook-cli send --type track --event "Order Completed" --user-id u_42 --url "$url/hook" --secret "$WEBHOOK_SECRET" > /dev/null
webhook-cli send --type track --event "Signed Up" --user-id u_43 --url "$url/hook" --secret "$WEBHOOK_SECRET" > /dev/null
webhook-cli send --type identify --user-id u_7 --url "$url/hook" --secret wrong --retry-window 0 > /dev/null 2>&1
webhook-cli expect --from listen.url --type track --count 2 --timeout 10s; echo "pass=$?"
webhook-cli expect --from listen.url --type track --event "Order Completed" --user-id u_42; echo "one=$?"
webhook-cli expect --from listen.url --type track --count 3 --timeout 1s; echo "short=$?"
webhook-cli expect --from "$(sed -n 2p listen.url)" --type identify --verdict invalid; echo "invalid=$?"
webhook-cli expect --from listen.url --type nope 2>&1; echo "bad=$?"
# A stopped listen still accepts connections (the kernel does) and never answers: expect ends at its own deadline.
kill -STOP "$listen"
webhook-cli expect --from listen.url --timeout 1s 2>&1; echo "stopped=$?"
kill -CONT "$listen"
# A FIFO nobody writes to would block a read for ever: refused before it is opened.
mkfifo from.fifo
webhook-cli expect --from from.fifo 2>&1; echo "fifo=$?"
kill -TERM "$listen"; wait "$listen"; echo "listen=$?"
webhook-cli expect --from listen.url --timeout 1s 2>&1; echo "gone=$?"
`;

describe("webhook-cli expect in a CI shell", { tags: ["smoke"] }, () => {
  it("passes, fails with what did arrive, and refuses bad input, a FIFO, and a control URL that does not answer (gone or stopped)", async () => {
    const child = spawn("bash", ["--norc", "-c", SCRIPT], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: "1", CI: "1", WEBHOOK_SECRET: "ci-secret", WEBHOOK_CLI_BIN: BIN },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const { code, stdout, stderr } = await collect(child, 90_000);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const lines = stdout;
    expect(lines).toMatch(/^control ports differ\n/);
    expect(lines).toContain('✓ 2 requests since listen started matching {type: "track"} with a valid verdict (expected at least 2)\npass=0\n');
    expect(lines).toContain(
      '✓ 1 request since listen started matching {type: "track", event: "Order Completed", userId: "u_42"} with a valid verdict (expected at least 1)\none=0\n',
    );
    expect(lines).toMatch(
      new RegExp(
        [
          '✗ expected at least 3 requests since listen started matching \\{type: "track"\\} with a valid verdict; 2 arrived \\(waited 1\\.0s\\)',
          "3 requests arrived: 2 track \\(valid\\), 1 identify \\(invalid\\)",
          '  #1 POST /hook  track  u_42  "Order Completed"  valid  → 200',
          '  #2 POST /hook  track  u_43  "Signed Up"  valid  → 200',
          "  #3 POST /hook  identify  u_7  invalid \\(X-Signature does not match the body\\)  → 401",
          "short=1",
        ].join("\n"),
      ),
    );
    expect(lines).toContain('✓ 1 request since listen started matching {type: "identify"} with an invalid verdict (expected at least 1)\ninvalid=0\n');
    expect(lines).toMatch(/error: --type: unknown message type "nope".*\nbad=2\n/);
    expect(lines).toMatch(
      /error: --from: http:\/\/127\.0\.0\.1:\d+ does not answer: no answer within 6\.0s \(--timeout 1\.0s and 5\.0s more\): is listen stopped\?\nstopped=2\n/,
    );
    expect(lines).toContain("error: from.fifo: --from: not a regular file (a pipe, a device or a directory): give a file\nfifo=2\n");
    // listen itself exits 1: a request was invalid.
    expect(lines).toContain("listen=1\n");
    expect(lines).toMatch(/error: --from: http:\/\/127\.0\.0\.1:\d+ does not answer: connection refused \(ECONNREFUSED\): is listen running\?\ngone=2\n$/);
  }, 120_000);
});
