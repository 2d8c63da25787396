#!/usr/bin/env bash
# The README's walk-through, end to end, against a running Callplane on the built-in simulator:
# an agent (examples/agent.json), a simulator telephony configuration, the contact list (examples/contacts.csv)
# uploaded through a presigned URL, a campaign that dials it, its runs, and the usage report.
#
#   npm start                       # in another terminal (state under ./data)
#   examples/walkthrough.sh
#
# Needs bash, curl and node (for JSON; no jq). Settings, all optional:
#   CALLPLANE_URL       the service (default http://localhost:8000)
#   CALLPLANE_API_KEY   an API key to use; without one the script logs in as CALLPLANE_EMAIL/CALLPLANE_PASSWORD
#                       and, when that user does not exist yet, signs it up (works on a fresh data directory)
#   CALLPLANE_EMAIL     default walkthrough@example.com
#   CALLPLANE_PASSWORD  default "walkthrough password"
#   WALKTHROUGH_TIMEOUT seconds to wait for the campaign to complete (default 120)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BASE="${CALLPLANE_URL:-http://localhost:8000}"
API="$BASE/api/v1"
EMAIL="${CALLPLANE_EMAIL:-walkthrough@example.com}"
PASSWORD="${CALLPLANE_PASSWORD:-walkthrough password}"
TIMEOUT="${WALKTHROUGH_TIMEOUT:-120}"

# json FIELD.PATH: prints one field of the JSON on stdin (strings bare, anything else as JSON)
json() {
  node -e '
    let s = "";
    process.stdin.on("data", (d) => (s += d)).on("end", () => {
      let v = JSON.parse(s);
      for (const k of process.argv[1].split(".").filter(Boolean)) v = v == null ? undefined : v[k];
      if (v === undefined) { console.error(`no ${process.argv[1]} in ${s}`); process.exit(1); }
      process.stdout.write(typeof v === "string" ? v : JSON.stringify(v));
    });' "$1"
}

AUTH=()
# call METHOD PATH [JSON BODY | @FILE]: prints the response body; stops the script on anything but 200
call() {
  local method="$1" path="$2" body="${3:-}" out status
  local args=(-sS -X "$method" "${AUTH[@]}" -w '\n%{http_code}')
  if [ -n "$body" ]; then args+=(-H 'content-type: application/json' --data-binary "$body"); fi
  out="$(curl "${args[@]}" "$API$path")"
  status="${out##*$'\n'}"
  out="${out%$'\n'*}"
  if [ "$status" != 200 ]; then
    echo "$method $path answered $status: $out" >&2
    return 1
  fi
  printf '%s' "$out"
}
step() { printf '\n== %s\n' "$*"; }

step "0. the service at $BASE"
call GET /health; echo

if [ -n "${CALLPLANE_API_KEY:-}" ]; then
  AUTH=(-H "x-api-key: $CALLPLANE_API_KEY")
else
  credentials="$(node -e 'process.stdout.write(JSON.stringify({ email: process.argv[1], password: process.argv[2], organization_name: "Walkthrough" }))' "$EMAIL" "$PASSWORD")"
  if ! login="$(call POST /auth/login "$credentials" 2>/dev/null)"; then
    step "signing up $EMAIL (no such user yet)"
    login="$(call POST /auth/signup "$credentials")"
  fi
  AUTH=(-H "authorization: Bearer $(printf '%s' "$login" | json token)")
fi

step "1. an agent: examples/agent.json (the dental appointment reminder)"
WORKFLOW_ID="$(call POST /workflow/create/definition "@$HERE/agent.json" | json id)"
echo "workflow_id=$WORKFLOW_ID"

step "2. a simulator telephony configuration (numbers ending 01 busy, 02 no answer, 03 voicemail, 00 failed)"
CONFIG_ID="$(call POST /organizations/telephony-configs \
  '{"name":"Walkthrough simulator '"$(date +%s%N)"'","is_default_outbound":true,"config":{"provider":"simulator","ring_ms":300,"talk_ms":1000}}' | json id)"
echo "telephony_configuration_id=$CONFIG_ID"

step "3. upload examples/contacts.csv: presign, then PUT the bytes to upload_url"
SIZE="$(wc -c < "$HERE/contacts.csv" | tr -d ' ')"
PRESIGNED="$(call POST /s3/presigned-upload-url '{"file_name":"contacts.csv","file_size":'"$SIZE"'}')"
UPLOAD_URL="$(printf '%s' "$PRESIGNED" | json upload_url)"
FILE_KEY="$(printf '%s' "$PRESIGNED" | json file_key)"
curl -sS -f -X PUT -H 'content-type: text/csv' --data-binary "@$HERE/contacts.csv" "$UPLOAD_URL"; echo

step "4. a campaign from it (retries off so it finishes in seconds), started"
CAMPAIGN_ID="$(call POST /campaign/create \
  '{"name":"Reminders","workflow_id":'"$WORKFLOW_ID"',"telephony_configuration_id":'"$CONFIG_ID"',"source_type":"csv","source_id":"'"$FILE_KEY"'","max_concurrency":5,"retry_config":{"enabled":false}}' | json id)"
echo "campaign_id=$CAMPAIGN_ID"
call POST "/campaign/$CAMPAIGN_ID/start" | json state; echo

deadline=$((SECONDS + TIMEOUT))
while :; do
  CAMPAIGN="$(call GET "/campaign/$CAMPAIGN_ID")"
  STATE="$(printf '%s' "$CAMPAIGN" | json state)"
  echo "state=$STATE processed_rows=$(printf '%s' "$CAMPAIGN" | json processed_rows)/$(printf '%s' "$CAMPAIGN" | json total_rows)"
  case "$STATE" in completed) break ;; failed|cancelled) echo "campaign ended $STATE" >&2; exit 1 ;; esac
  if [ "$SECONDS" -ge "$deadline" ]; then echo "campaign not completed after ${TIMEOUT}s" >&2; exit 1; fi
  sleep 1
done

step "5. every call is a run (with its disposition); usage across the organization"
call GET "/campaign/$CAMPAIGN_ID/runs?limit=20" | node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    for (const r of JSON.parse(s).runs) console.log(`run ${r.id}: ${r.initial_context?.phone_number} ${r.status} ${r.gathered_context?.mapped_call_disposition ?? ""}`);
  });'
call GET "/organizations/usage/runs?limit=20" | json total_count | sed 's/^/runs in the usage report: /'; echo

step "done: campaign $CAMPAIGN_ID completed"
