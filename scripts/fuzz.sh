#!/usr/bin/env bash
# `npm run fuzz` (and CI, after the tests): schemathesis against the gateway's /openapi.json.
#
# 1. A Python virtual environment in var/fuzz-venv with a pinned schemathesis (PyPI).
# 2. The platform on free ports (scripts/fuzz-stack.ts: embedded PostgreSQL, Temporal dev server,
#    MailDev, every service's API and worker, the gateway).
# 3. An organization, a user access token and an API key made with the CLI (`npm run cli`), and a
#    little data seeded through the API (scripts/fuzz-seed.mjs) so valid requests meet real records.
# 4. schemathesis with the user token, and the API key on the middleware push/posting routes (the
#    only routes an API key may call), checks: not_a_server_error, response_schema_conformance,
#    status_code_conformance, content_type_conformance, negative_data_rejection,
#    positive_data_acceptance. Any finding fails the run (exit code 1).
# 5. Before schemathesis, targeted hostile input on every operation (scripts/fuzz-hostile.mjs): lone
#    surrogates, strings beyond their maxLength, over-precise and extreme numbers, gzip bodies and a gzip
#    body inflating beyond the limit; any 5xx is a finding.
#
# FUZZ_OPERATIONS (a regular expression on operationId) restricts the hostile cases to some operations;
# FUZZ_SCHEMATHESIS=0 runs only those (no schemathesis), e.g. to check a change quickly.
#
# Bounded: FUZZ_MAX_EXAMPLES cases per operation and phase (default 10); the run takes a few minutes.
# Exclusions (documented false positives, each with its reason) are in the schemathesis config below.
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-10}"
VENV=var/fuzz-venv
WORK=var/fuzz
mkdir -p "$WORK"
started=$(date +%s)

# ---- 1. schemathesis in its own virtual environment
PYTHON="${PYTHON:-python3}"
if [ "${FUZZ_SCHEMATHESIS:-1}" != 0 ] && { [ ! -x "$VENV/bin/schemathesis" ] || [ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null)" != "$SCHEMATHESIS_VERSION" ]; }; then
  echo "[fuzz] installing schemathesis $SCHEMATHESIS_VERSION into $VENV"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

# ---- 2. the stack
READY="$WORK/stack.json"
rm -f "$READY"
node --import tsx scripts/fuzz-stack.ts "$READY" >"$WORK/stack.log" 2>&1 &
STACK_PID=$!
cleanup() {
  if kill -0 "$STACK_PID" 2>/dev/null; then
    kill -TERM "$STACK_PID" 2>/dev/null || true
    wait "$STACK_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT
for _ in $(seq 1 600); do
  [ -s "$READY" ] && break
  if ! kill -0 "$STACK_PID" 2>/dev/null; then
    echo "[fuzz] the stack failed to start:" >&2
    cat "$WORK/stack.log" >&2
    exit 1
  fi
  sleep 0.5
done
[ -s "$READY" ] || { echo "[fuzz] the stack did not start within 5 minutes" >&2; cat "$WORK/stack.log" >&2; exit 1; }
json() { node -e 'const o = JSON.parse(require("fs").readFileSync(0, "utf8")); process.stdout.write(String(process.argv[1].split(".").reduce((v, k) => v[k], o)))' "$1"; }
GATEWAY=$(json gateway_url <"$READY")
export DATABASE_URL TEMPORAL_ADDRESS
DATABASE_URL=$(json database_url <"$READY")
TEMPORAL_ADDRESS=$(json temporal_address <"$READY")
echo "[fuzz] stack up at $GATEWAY"

# ---- 3. credentials through the CLI, then a little data through the API
cli() { node scripts/bootstrap.mjs cli --quiet-bootstrap "$@"; }
ORG_JSON=$(cli org create --name "Fuzz Receivables GmbH" --admin-email fuzz.admin@fuzz.example --admin-name "Fuzz Admin" --currency EUR --timezone Europe/Berlin)
ORG_ID=$(printf '%s' "$ORG_JSON" | json organization_id)
USER_ID=$(printf '%s' "$ORG_JSON" | json user_id)
export FUZZ_TOKEN FUZZ_API_KEY
FUZZ_TOKEN=$(cli token issue --org "$ORG_ID" --user "$USER_ID" --name fuzz | json token)
FUZZ_API_KEY=$(cli api-key create --org "$ORG_ID" --name fuzz-middleware | json token)
node scripts/fuzz-seed.mjs "$GATEWAY" "$FUZZ_TOKEN" "$FUZZ_API_KEY"

# ---- 3b. targeted hostile input (any 5xx fails the run)
set +e
node scripts/fuzz-hostile.mjs "$GATEWAY" "$FUZZ_TOKEN" "$FUZZ_API_KEY"
status_hostile=$?
set -e
if [ "${FUZZ_SCHEMATHESIS:-1}" = 0 ]; then
  echo "[fuzz] finished in $(( $(date +%s) - started )) s with exit code $status_hostile (schemathesis skipped)"
  exit $status_hostile
fi

# ---- 4. schemathesis
CONFIG="$WORK/schemathesis.toml"
cat >"$CONFIG" <<'TOML'
headers = { Authorization = "Bearer ${FUZZ_TOKEN}" }

[checks]
enabled = false
not_a_server_error.enabled = true
response_schema_conformance.enabled = true
status_code_conformance.enabled = true
content_type_conformance.enabled = true
negative_data_rejection.enabled = true
positive_data_acceptance.enabled = true

# Organization API keys are the only credential of the middleware routes (user tokens get 403).
[[operations]]
include-path-regex = "^/v2/integrations/providers/middleware/"
headers = { Authorization = "Bearer ${FUZZ_API_KEY}" }

# The middleware pushes answer 200 with one result per record (spec: per-record success or error
# code): a record that breaks its documented schema is refused in its result, the others stored, so
# negative_data_rejection's "expected a 4xx for the whole request" does not apply to them. The
# targeted hostile pass before schemathesis and the push tests check those per-record refusals.
# Their records are open objects (unknown keys are ignored), so generated records carry arbitrary keys,
# among them `__proto__`: the kernel's JSON parser refuses a body holding that key anywhere (422
# json_invalid, the prototype-pollution guard), a rule JSON Schema cannot state for nested free-form
# values. 422 is therefore also an accepted answer to their schema-valid data.
[[operations]]
include-operation-id = "pushMiddlewareCustomers"
checks.negative_data_rejection.enabled = false
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "pushMiddlewareInvoices"
checks.negative_data_rejection.enabled = false
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

# ---- Documented false positives of positive_data_acceptance: operations whose valid requests obey
# rules JSON Schema cannot state, so a request that matches the schema may rightly get 422. For these
# (and only these) 422 is also an accepted answer to schema-valid data; every other check still runs.
# Each entry names its rule.

# A body id must name a record of the caller's organization (422 `value_error.not_found` otherwise):
# generated UUIDs name none. Also: amounts given as JSON numbers may carry at most the currency's
# decimals, and JSON Schema's multipleOf cannot state decimal places of binary floats.
[[operations]]
include-operation-id = "createPayment"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updatePayment"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "approvePayment"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
# A remittance request's partner_id must name a customer of the organization with an email address, and
# without one the deposit's payer must be identifiable; a debit is no deposit (each a 422 saying why).
[[operations]]
include-operation-id = "sendRemittanceRequest"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "createAdjustment"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updateAdjustment"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "createUser"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updateUser"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
# A webhook endpoint's URL must be an http(s) URL whose host is not (and does not resolve to) a
# loopback, private, link-local or metadata address unless OUTBOUND_ALLOWLIST allows it: the outbound
# policy and DNS decide, which JSON Schema cannot state (a generated "" or "ftp://…" is rightly 422).
[[operations]]
include-operation-id = "createWebhookEndpoint"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updateWebhookEndpoint"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
# The same for a query reference: business_unit_id__in must name units of the organization.
[[operations]]
include-operation-id = "predictedOverdue"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
# Conditions (tags, segments) are a tree the JSON Schema only describes as an object (the language is
# checked by the kernel: fields, ops, value types, tag references); partner ids, tag and segment
# filters, assignees and units are references to records of the organization.
[[operations]]
include-operation-id = "createCustomerSegment"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updateCustomerSegment"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "createTag"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updateTag"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "addTagPartners"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "removeTagPartners"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "listPartners"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updatePartner"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

# Report configs: `weekday` is required for weekly reports and refused for the others (a rule between two
# fields, also on PATCH against the stored config). The organization's `timezone` must be an IANA zone name.
[[operations]]
include-operation-id = "createReportConfig"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updateReportConfig"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updateOrganization"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
# Extractions: `file_id` is required for `file` jobs and refused for `onboarding` and `synthesis`, which also
# need a `collection` (rules between fields); the file must be the organization's (404) and verified (422).
[[operations]]
include-operation-id = "createPlaybookExtraction"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
# Proposal review: `reviewed_by`, when given, must be the caller's own user id (recorded from the credential).
[[operations]]
include-operation-id = "approveKnowledgeProposal"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "rejectKnowledgeProposal"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

# Connection settings depend on the provider (`provider_name`, or the stored connection's provider):
# a setting name of another provider is refused (422), and /authenticate must name the connection's
# own provider. Also the body's business_unit_id must name a unit of the organization (see above).
[[operations]]
include-operation-id = "createConnection"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updateConnection"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "authenticateConnection"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

# Collection policies: segment_id and each step's template must be the organization's (422 at their loc;
# generated UUIDs name none), and a step's template must fit its channel (email_template_id for an email
# step, sms_template_id for an sms step, neither for a task: a rule between fields). A PATCH of a policy
# or a task must change something (at least one field). A real collection run is as of today in the
# organization's timezone: another as_of_date is only for dry runs (a rule between fields and the date).
[[operations]]
include-operation-id = "createCollectionPolicy"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updateCollectionPolicy"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updateTask"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "startCollectionRun"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

# Promises to pay and disputes: the partner, invoices and invoice must be the organization's (422 at
# their loc; generated UUIDs name none), the amount within the invoices' open total or the invoice
# amount, the promised date from today to a year ahead in the organization's timezone.
[[operations]]
include-operation-id = "createPromiseToPay"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "createDispute"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

# Date ranges: end_date may not be before start_date (a rule between two parameters).
[[operations]]
include-operation-id = "getBankTransactionMetrics"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "listExchangeRates"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "listPayments"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

# Exchange rates: base and quote currency differ, a pair and date once per batch, and a rate given as
# a JSON number has at most 10 decimals (not expressible for binary floats).
[[operations]]
include-operation-id = "loadExchangeRates"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

# Remittances: allocations must add up to transaction_amount, amounts as JSON numbers have at most 4
# decimals; the CSV advice must have the invoice-number and amount columns (file content).
[[operations]]
include-operation-id = "createRemittance"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "createRemittanceFromCsv"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

# Bank statement upload: the file must parse as the declared format (camt.053 XML, MT940, BAI2, CSV
# with its mapping); a generated byte string is no statement.
[[operations]]
include-operation-id = "uploadBankStatement"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

# API keys: expires_at must lie in the future (depends on the clock).
[[operations]]
include-operation-id = "createApiKey"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]

# Mailbox settings: rules between fields (each transport's needs, a key given or already stored,
# Microsoft ids when enabled / bring-your-own), and a custom inbound host outside the platform's domain.
[[operations]]
include-operation-id = "putMailboxSettings"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
# Caller-ID registration: a submission (submit true) needs its fields, a phone number must exist in its
# country's numbering plan, regions must be subdivisions of the registration's country.
[[operations]]
include-operation-id = "putCnamRegistration"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
# Out-of-office: backup_user_id must name another active user of the organization, start_date <= end_date,
# end_date not past in the organization's timezone, no overlap or coverage chain (rules between fields,
# records and the clock).
[[operations]]
include-operation-id = "createUserOoo"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "updateUserOoo"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
# User invites: business_unit_ids must name units of the organization (see above). Accepting takes an
# invite token from an email (any generated one is 401) and is rate-limited per client address (429).
[[operations]]
include-operation-id = "createUserInvite"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
[[operations]]
include-operation-id = "acceptUserInvite"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
# Inbox messages: partner_id and assignee_id must name a partner / an active user of the organization,
# and `status: assigned` needs an assignee (given or already on the message): rules between fields and records.
[[operations]]
include-operation-id = "updateInboxMessage"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "404", "409", "422", "429"]
TOML

# Two runs: the middleware routes with the API key first, then every other route with the user token.
# The second run may revoke API keys (DELETE /v2/api-keys/{id} with ids it read from GET /v2/api-keys,
# as any admin client can), so the key's routes go first.
st() {
  # inside var/fuzz: schemathesis keeps its cache (.schemathesis/) in the working directory
  (cd "$WORK" && "../../$VENV/bin/schemathesis" --config-file schemathesis.toml run "$GATEWAY/openapi.json" \
    --phases examples,coverage,fuzzing \
    --max-examples "$MAX_EXAMPLES" \
    --workers 1 \
    --seed "${FUZZ_SEED:-20260922}" \
    --suppress-health-check all \
    --request-timeout 30 \
    --report junit --report-dir report \
    --no-color "$@")
}
set +e
st --include-path-regex '^/v2/integrations/providers/middleware/'
status_key=$?
st --exclude-path-regex '^/v2/integrations/providers/middleware/'
status_token=$?
set -e
status=$(( status_hostile != 0 ? status_hostile : status_key != 0 ? status_key : status_token ))
echo "[fuzz] finished in $(( $(date +%s) - started )) s with exit code $status"
exit $status
