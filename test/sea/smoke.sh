#!/usr/bin/env bash
# The single executable's smoke test (docs/single-executable.md): every command, run from a copy of
# the executable in a directory of its own, in a shell whose PATH finds no `node`.
#
#   test/sea/smoke.sh [build/sea/webhook-cli]      (.ci/sea builds it first, then runs this)
set -euo pipefail
cd "$(dirname "$0")/../.."
sea="$(realpath "${1:-build/sea/webhook-cli}")"
repo="$(pwd)"
work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# The checksum npm run sea wrote, as a user checks a download.
(cd "$(dirname "$sea")" && sha256sum -c --quiet "$(basename "$sea").sha256")
version="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json)"
mkdir -p "$work/bin" "$work/tools" "$work/assets"
cp "$sea" "$work/bin/webhook-cli"
cp src/inspector/assets/* "$work/assets/"
# The tools this script uses, and nothing else: no node, no npm.
for tool in cat cmp curl grep head mkdir rm sed seq sha256sum sleep tr wc; do ln -s "$(command -v "$tool")" "$work/tools/$tool"; done
export PATH="$work/bin:$work/tools"
unset NODE_OPTIONS NODE_PATH
hash -r
cd "$work"
if command -v node >/dev/null; then
  echo "FAIL: PATH still finds $(command -v node)" >&2
  exit 1
fi
echo "PATH=$PATH finds no node; running $sea (Node.js inside it)"

ok() { echo "ok - $*"; }
fail() {
  echo "FAIL: $1" >&2
  shift
  for log in "$@"; do echo "--- $log" >&2 && cat "$log" >&2; done
  exit 1
}
# Waits up to 10 s for a file to have content.
ready() {
  for _ in $(seq 1 100); do
    [ -s "$1" ] && return 0
    sleep 0.1
  done
  fail "$1 never appeared" "${@:2}"
}
# Runs a command in the background; cleanup kills it if it is still running then.
start() {
  "$@" &
  pids+=($!)
}
# Waits for a process started here, which is then no longer cleanup's, and returns its exit status.
reap() {
  local status=0 kept=() pid
  wait "$1" 2>/dev/null || status=$?
  for pid in "${pids[@]}"; do [ "$pid" = "$1" ] || kept+=("$pid"); done
  pids=("${kept[@]}")
  return "$status"
}
# Stops a process started here with SIGINT, as Ctrl-C does, and returns its exit status.
stop() {
  kill -INT "$1"
  reap "$1"
}

# --version, --help, generate
[ "$(webhook-cli --version)" = "$version" ] || fail "--version is not $version"
webhook-cli --help | grep -q "audience" || fail "--help lists no audience command"
webhook-cli generate --seed 7 >messages.ndjson
[ "$(wc -l <messages.ndjson)" -eq 7 ] || fail "generate printed $(wc -l <messages.ndjson) lines, not 7" messages.ndjson
ok "--version, --help, generate"

# A user's mistake: exit 2, one clear line, no stack trace.
status=0
webhook-cli send messages.ndjson --url not-a-url --secret s 2>mistake.log || status=$?
[ "$status" -eq 2 ] && grep -q "not-a-url" mistake.log && ! grep -q "    at " mistake.log || fail "a bad --url: exit $status" mistake.log
ok "a bad --url exits 2 naming it, no stack trace"

# listen --ui serving its page and scripts, send, expect
start webhook-cli listen --port 0 --secret s3cret --ui --ui-port 0 --record recording.ndjson --ready-file listen.url >listen.log 2>&1
listen=$!
ready listen.url listen.log
hook="$(head -1 listen.url)/hook"
ui="$(sed -n 2p listen.url)"
webhook-cli send messages.ndjson --url "$hook" --secret s3cret >send.log 2>&1 || fail "send" send.log listen.log
webhook-cli expect --from listen.url --count 7 --timeout 10s >expect.log 2>&1 || fail "expect" expect.log listen.log
curl -fsS "$ui/" >page.html || fail "GET $ui/"
cmp -s page.html assets/index.html || fail "the page served is not src/inspector/assets/index.html"
for file in assets/*; do
  asset="${file#assets/}"
  [ "$asset" = index.html ] && continue
  curl -fsS "$ui/$asset" >served || fail "GET $ui/$asset"
  cmp -s served "$file" || fail "/$asset served is not src/inspector/assets/$asset"
done
curl -fsS "$ui/api/received?type=track" | grep -q '"matched":1' || fail "the control API does not list the track"
ok "listen --ui served its page, scripts and styles byte for byte; send delivered 7, expect saw them"

# replay, started again with its young-generation flag in NODE_OPTIONS (src/cli/shell/relaunch.ts)
start webhook-cli listen --port 0 --secret s3cret --delay 250ms --ready-file slow.url >slow.log 2>&1
slow=$!
ready slow.url slow.log
start webhook-cli replay recording.ndjson --url "$(head -1 slow.url)/hook" --secret s3cret >replay.log 2>&1
replay=$!
relaunched=""
for _ in $(seq 1 100); do
  if tr '\0' '\n' 2>/dev/null <"/proc/$replay/environ" | grep -qx "NODE_OPTIONS=--max-semi-space-size=16"; then
    relaunched="$(tr '\0' ' ' <"/proc/$replay/cmdline")"
    break
  fi
  sleep 0.05
done
reap "$replay" || fail "replay" replay.log slow.log
[ "$relaunched" = "webhook-cli replay recording.ndjson --url $(head -1 slow.url)/hook --secret s3cret " ] ||
  fail "replay did not start again with NODE_OPTIONS=--max-semi-space-size=16 and its arguments unchanged (command line: '$relaunched')" replay.log
grep -q "7 sent, 7 delivered" replay.log || fail "replay did not deliver 7" replay.log
stop "$slow" || true
ok "replay started itself again with NODE_OPTIONS=--max-semi-space-size=16, the same arguments, and delivered 7"

# inspect FILE
start webhook-cli inspect recording.ndjson --port 0 --secret s3cret >inspect.log 2>&1
inspect=$!
for _ in $(seq 1 100); do grep -q "Inspector: http" inspect.log && break || sleep 0.1; done
page="$(grep -o 'http://127.0.0.1:[0-9]*' inspect.log | head -1)"
[ -n "$page" ] || fail "inspect printed no URL" inspect.log
curl -fsS "$page/" | cmp -s - assets/index.html || fail "inspect's page is not src/inspector/assets/index.html"
curl -fsS "$page/api/info" | grep -q '"requests":7,' || fail "inspect's /api/info does not count 7 requests" inspect.log
stop "$inspect" || true
ok "inspect served the page and the recording's 7 rows"

# audience sync, demo
printf 'u1\nu2\nu3\n' >members.txt
webhook-cli audience sync --name "VIP Users" --members members.txt --state audience.json --url "$hook" --secret s3cret >audience.log 2>&1 ||
  fail "audience sync" audience.log
webhook-cli expect --from listen.url --type identify --user-id u3 --timeout 10s >/dev/null || fail "audience sync's identify for u3 never arrived" audience.log
webhook-cli demo --json >demo.log 2>&1 || fail "demo" demo.log
[ "$(grep -c '"verified":true' demo.log)" -eq 7 ] || fail "demo did not verify 7" demo.log
ok "audience sync, demo"

# sign and verify: one scheme's round trip (Standard Webhooks), and a changed body refused
whsec=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
head -1 messages.ndjson >body.json
webhook-cli sign --scheme standard --secret "$whsec" body.json >signed.txt 2>sign.log || fail "sign" sign.log
grep -q "^webhook-signature: v1," signed.txt || fail "sign printed no webhook-signature header" signed.txt sign.log
webhook-cli verify --scheme standard --secret "$whsec" --header @signed.txt body.json >verify.log 2>&1 || fail "verify of what sign printed" verify.log signed.txt
grep -q "^verified: standard" verify.log || fail "verify did not say verified" verify.log
printf ' ' >>body.json
status=0
webhook-cli verify --scheme standard --secret "$whsec" --header @signed.txt body.json >changed.log 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "verify of a changed body: exit $status, not 1" changed.log
ok "sign --scheme standard; verify took its headers (exit 0) and refused the body changed (exit 1)"

# Functions: a destination function on a generated event, its request to Slack sent to listen instead
# (--function-egress: undici's fetch inside the executable); a source function on a test request;
# send --function; a package the function uses, found in the user's project (createRequire from disk).
fx="$repo/fixtures/functions"
slack="$(head -1 listen.url)/slack"
webhook-cli function run "$fx/slack-alert.js" --type track --event "Order Completed" --settings "$fx/slack-settings.json" \
  --function-egress "$slack" --secret s3cret >function-destination.log 2>&1 || fail "function run (destination)" function-destination.log
grep -q "^1 event: 1 delivered" function-destination.log || fail "function run did not deliver its event" function-destination.log
webhook-cli function run "$fx/github-source.js" --request "$fx/github-issue-opened.json" >function-source.log 2>&1 ||
  fail "function run --request" function-source.log
grep -q 'Segment.track: {"type":"track","event":"issues opened"' function-source.log || fail "the source function made no track call" function-source.log
webhook-cli send --type track --event "Order Completed" --function "$fx/slack-alert.js" --settings "$fx/slack-settings.json" \
  --function-egress "$slack" --secret s3cret >send-function.log 2>&1 || fail "send --function" send-function.log
grep -q "^1 message: 1 delivered" send-function.log || fail "send --function did not deliver" send-function.log
webhook-cli expect --from listen.url --path /slack --count 2 --timeout 10s >expect-function.log 2>&1 ||
  fail "the functions' two requests to Slack did not reach listen, verified" expect-function.log listen.log
mkdir -p node_modules/lodash
printf '{"name": "lodash", "version": "4.17.19", "main": "index.js"}\n' >node_modules/lodash/package.json
printf 'module.exports = { upperFirst: (text) => text.charAt(0).toUpperCase() + text.slice(1) };\n' >node_modules/lodash/index.js
printf 'async function onTrack(event) {\n  return _.upperFirst(event.event);\n}\n' >upper.js
webhook-cli function run upper.js --type track --event "order completed" --json >function-lodash.log 2>&1 || fail "function run with _" function-lodash.log
grep -q '"returned":"Order completed"' function-lodash.log || fail "the function's _ was not the project's lodash" function-lodash.log
stop "$listen" || true
ok "function run (a destination with --type, a source with --request), send --function, _ from the project's node_modules"

# serve, durable: three calls stored while the receiver is down, serve killed with SIGKILL, restarted
# on the same --state once the receiver is back: all three arrive.
start webhook-cli listen --port 0 --secret s3cret --ready-file down.url >down.log 2>&1
ready down.url down.log
receiver="$(head -1 down.url)"
stop "${pids[-1]}" || true
start webhook-cli serve --port 0 --write-key wk --state state --url "$receiver/hook" --secret s3cret --ready-file serve.url >serve1.log 2>&1
serve=$!
ready serve.url serve1.log
for event in One Two Three; do
  curl -fsS -u wk: -d "{\"userId\":\"u1\",\"event\":\"$event\"}" "$(cat serve.url)/v1/track" >/dev/null || fail "POST /v1/track" serve1.log
done
curl -fsS "$(cat serve.url)/health" | grep -q '"accepted":3' || fail "serve did not accept 3" serve1.log
kill -9 "$serve"
reap "$serve" || true
start webhook-cli listen --port "${receiver##*:}" --secret s3cret --ready-file up.url >up.log 2>&1
up=$!
ready up.url up.log
rm serve.url
start webhook-cli serve --port 0 --write-key wk --state state --url "$receiver/hook" --secret s3cret --ready-file serve.url >serve2.log 2>&1
serve=$!
ready serve.url serve2.log
webhook-cli expect --from up.url --type track --count 3 --timeout 15s >expect-serve.log 2>&1 || fail "the three calls did not arrive" expect-serve.log serve2.log up.log
stop "$serve" || fail "serve, restarted, did not stop cleanly" serve2.log
stop "$up" || true
grep -q "resuming 3 messages" serve2.log || fail "serve did not resume 3 stored messages" serve2.log
grep -q "3 delivered" serve2.log || fail "serve did not deliver 3" serve2.log
ok "serve (node:sqlite) survived SIGKILL: restarted on its --state, it delivered the 3 calls stored"

# completion: the scripts, and bash's completing a command with no Node.js to call
for shell in bash zsh fish; do webhook-cli completion "$shell" | grep -q "webhook-cli" || fail "completion $shell"; done
# shellcheck disable=SC1090
source <(webhook-cli completion bash)
COMP_WORDS=(webhook-cli li)
COMP_CWORD=1
_webhook_cli
[ "${COMPREPLY[*]}" = "listen" ] || fail "bash completes 'li' as '${COMPREPLY[*]}'"
ok "completion bash/zsh/fish; bash completes 'li' to 'listen'"

# Nothing printed a warning (the single executable's own, node:sqlite's): a user would see it.
warned="$(grep -l "Warning" ./*.log || true)"
[ -z "$warned" ] || fail "a warning was printed" $warned
ok "no warning printed"

echo "sea smoke: all passed"
