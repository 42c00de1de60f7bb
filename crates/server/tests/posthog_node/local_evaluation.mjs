// Asks PostHog's own Node SDK (`posthog-node` from npm) for flags against a running Burrow in
// both of its ways: locally, from the definitions it loads with a personal key
// (`onlyEvaluateLocally: true`), and remotely (`/flags/`). For each person on standard input
// (`[{"distinct_id", "properties", "groups"?, "group_properties"?}]`), every key of FLAG_KEYS
// must have a local answer (not undefined) equal to the remote one; every key of
// REMOTE_ONLY_KEYS (flags PostHog's server makes the SDKs ask `/flags` for) must have no local
// answer, and the SDK's own fallback to `/flags` must give the remote one. Exits 1 on any
// disagreement or any error the SDK reports; prints one JSON object: {key: [value per person]}.
//
// Environment: POSTHOG_NODE_DIR (where posthog-node is installed), BURROW_URL, BURROW_TOKEN,
// BURROW_KEY (a personal API key with feature_flag:read), FLAG_KEYS and REMOTE_ONLY_KEYS
// (comma-separated).
import { webcrypto } from 'node:crypto'
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import path from 'node:path'

// posthog-node hashes with the global Web Crypto of Node 20 (its declared engine); Debian
// bookworm's Node 18 keeps it in node:crypto only, so it is put where Node 20 has it.
globalThis.crypto ??= webcrypto

const require = createRequire(path.join(process.env.POSTHOG_NODE_DIR, 'package.json'))
const { PostHog } = require('posthog-node')

const errors = []
const common = { host: process.env.BURROW_URL, flushAt: 1, fetchRetryCount: 0 }
const token = process.env.BURROW_TOKEN
const local = new PostHog(token, { ...common, personalApiKey: process.env.BURROW_KEY })
const remote = new PostHog(token, common)
for (const client of [local, remote]) {
  client.on('error', (error) => errors.push(String(error)))
}
const keys = process.env.FLAG_KEYS.split(',')
const remoteOnly = (process.env.REMOTE_ONLY_KEYS ?? '').split(',').filter((key) => key)
const values = Object.fromEntries([...keys, ...remoteOnly].map((key) => [key, []]))
const persons = JSON.parse(readFileSync(0, 'utf8'))
if (!(await local.waitForLocalEvaluationReady())) {
  errors.push('the flag definitions never loaded')
}
for (const person of persons) {
  const distinctId = person.distinct_id
  const options = {
    personProperties: person.properties,
    groups: person.groups ?? {},
    groupProperties: person.group_properties ?? {},
    sendFeatureFlagEvents: false,
  }
  for (const key of [...keys, ...remoteOnly]) {
    const here = await local.getFeatureFlag(key, distinctId, { ...options, onlyEvaluateLocally: true })
    const there = await remote.getFeatureFlag(key, distinctId, options)
    if (remoteOnly.includes(key)) {
      const fallback = await local.getFeatureFlag(key, distinctId, options)
      if (here !== undefined || fallback === undefined || fallback !== there) {
        errors.push(`${key} for ${distinctId}: local ${here} (expected none), fallback ${fallback}, /flags ${there}`)
      }
      values[key].push(there ?? null)
      continue
    }
    if (here === undefined || here !== there) {
      errors.push(`${key} for ${distinctId}: local ${here}, /flags ${there}`)
    }
    values[key].push(here ?? null)
  }
}
await Promise.all([local.shutdown(), remote.shutdown()])
if (errors.length > 0) {
  process.stderr.write(errors.join('\n') + '\n')
  process.exit(1)
}
process.stdout.write(JSON.stringify(values))
