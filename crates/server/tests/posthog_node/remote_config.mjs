// Asks PostHog's own Node SDK (`posthog-node` from npm) for a remote configuration flag's payload
// (`getRemoteConfigPayload`) from a running Burrow; prints it as JSON (`null` when the SDK gave
// none). Exits 1 on any error the SDK reports.
//
// Environment: POSTHOG_NODE_DIR (where posthog-node is installed), BURROW_URL, BURROW_TOKEN,
// BURROW_KEY (a personal API key with feature_flag:read), FLAG_KEY.
import { webcrypto } from 'node:crypto'
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
  personalApiKey: process.env.BURROW_KEY,
  fetchRetryCount: 0,
})
client.on('error', (error) => errors.push(String(error)))
const payload = await client.getRemoteConfigPayload(process.env.FLAG_KEY)
await client.shutdown()
if (errors.length > 0) {
  process.stderr.write(errors.join('\n') + '\n')
  process.exit(1)
}
process.stdout.write(JSON.stringify(payload ?? null))
