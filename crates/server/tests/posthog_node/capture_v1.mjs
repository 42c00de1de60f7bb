// Sends a survey response through PostHog's own Node SDK (`posthog-node` from npm) over capture
// v1 (`POSTHOG_CAPTURE_MODE=v1`: `POST /i/v1/analytics/events`, the token as a Bearer
// credential): a `survey sent` event answering both questions, and a `$pageview`. Exits 1 on any
// error the SDK reports, or when its `shutdown()` (which waits for the upload) does not resolve
// within 20 seconds.
//
// Environment: POSTHOG_NODE_DIR (where posthog-node is installed), POSTHOG_CAPTURE_MODE (v1),
// BURROW_URL, BURROW_TOKEN, SURVEY_ID, OPEN_QUESTION_ID, RATING_QUESTION_ID.
import { randomUUID, webcrypto } from 'node:crypto'
import { createRequire } from 'node:module'
import path from 'node:path'

// posthog-node hashes with the global Web Crypto of Node 20 (its declared engine); Debian
// bookworm's Node 18 keeps it in node:crypto only, so it is put where Node 20 has it.
globalThis.crypto ??= webcrypto

const require = createRequire(path.join(process.env.POSTHOG_NODE_DIR, 'package.json'))
const { PostHog } = require('posthog-node')

const errors = []
const client = new PostHog(process.env.BURROW_TOKEN, {
  host: process.env.BURROW_URL,
  flushAt: 1,
  fetchRetryCount: 0,
})
client.on('error', (error) => errors.push(String(error)))

const survey = process.env.SURVEY_ID
const open = process.env.OPEN_QUESTION_ID
const rating = process.env.RATING_QUESTION_ID
client.capture({
  distinctId: 'node-person',
  event: 'survey sent',
  properties: {
    $survey_id: survey,
    $survey_submission_id: randomUUID(),
    $survey_completed: true,
    [`$survey_response_${open}`]: 'Sent over capture v1.',
    [`$survey_response_${rating}`]: '8',
  },
})
client.capture({ distinctId: 'node-person', event: '$pageview', properties: { $current_url: '/' } })

const timeout = new Promise((_, reject) =>
  setTimeout(() => reject(new Error('shutdown() did not resolve within 20 s')), 20_000).unref()
)
try {
  await Promise.race([client.shutdown(), timeout])
} catch (error) {
  errors.push(String(error))
}
if (errors.length > 0) {
  process.stderr.write(errors.join('\n') + '\n')
  process.exit(1)
}
