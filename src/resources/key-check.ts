/**
 * Opening the secrets at start-up (issue 15, item 7): the configured key must be the key the
 * stored secrets were encrypted with — otherwise KnowHub refuses to start, naming the key
 * id it needs, unless told to run with secrets read-only — and secrets stored before their
 * envelopes were bound to owner and id (`kh1`) are re-encrypted once (`kh2`), recorded as
 * migration {@link SECRET_BINDING_MIGRATION}.
 */
import { KnowHubError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { noopLogger } from '../core/logger.js'
import type { SecretTransform } from '../store/resources/resources.js'
import { createSecretBox, type SecretBox, type SecretKey } from './secrets.js'

/** The name the one-time re-encryption of `kh1` secrets is recorded under (`knowhub_meta`, key `data-migration:<name>`). */
export const SECRET_BINDING_MIGRATION = '0042_secret_owner_binding'

/** What opening the secrets needs of the store (see `Store.resources`). */
export interface SecretOpenStore {
  resources: {
    secretKeyIds(): Promise<Array<{ key_id: string; count: number }>>
    upgradeSecrets(name: string, transform: SecretTransform): Promise<{ rewritten: number; unchanged: number } | undefined>
  }
}

/** Options of {@link openSecretBox}. */
export interface OpenSecretsOptions {
  /** Start even when stored secrets need another key, with every secret write refused (`secrets.readOnly`). */
  readOnly?: boolean | undefined
  /** Where the key came from, for the error message (e.g. `KNOWHUB_SECRET_KEY`, a key file path). */
  keySource?: string | undefined
  logger?: Logger
}

/**
 * The secret box of a starting KnowHub. Throws `config_error` naming the expected key id(s)
 * when stored secrets were encrypted with another key, unless `readOnly` (then secrets
 * under the configured key still read, and every encryption answers `secrets_read_only`).
 * Otherwise re-encrypts `kh1` secrets once, bound to owner and id.
 * @example
 * const box = await openSecretBox(store, keyring.key, { keySource: 'KNOWHUB_SECRET_KEY' })
 */
export async function openSecretBox(store: SecretOpenStore, key: SecretKey, options: OpenSecretsOptions = {}): Promise<SecretBox> {
  const logger = options.logger ?? noopLogger
  const foreign = (await store.resources.secretKeyIds()).filter((row) => row.key_id !== key.id)
  if (foreign.length > 0) {
    const expected = foreign.map((row) => row.key_id)
    const counts = foreign.map((row) => `${row.count} under key ${row.key_id}`).join(', ')
    if (!options.readOnly) {
      throw new KnowHubError(
        'config_error',
        `The configured secret key (${options.keySource ?? 'the key'}) has id ${key.id}, but the database holds secrets encrypted with key ${expected.join(' and ')} (${counts}). ` +
          `Start KnowHub with the key whose id is ${expected.join(' or ')} (KNOWHUB_SECRET_KEY or the key file; after an interrupted rotation, <key file>.new), ` +
          'or set KNOWHUB_SECRETS_READ_ONLY=1 (secrets.readOnly) to serve everything else with secret writes refused.',
        { key_id: key.id, expected_key_ids: expected, secrets_by_key: foreign },
      )
    }
    logger.warn('secrets.read_only', { key_id: key.id, expected_key_ids: expected, message: 'Secrets are read-only: the stored secrets need another key' })
    const reason = `it runs with key ${key.id}, but the stored secrets need key ${expected.join(' and ')}; restart it with that key (KNOWHUB_SECRET_KEY or the key file) to write secrets`
    return createSecretBox(key, { readOnly: { reason, expectedKeyIds: expected } })
  }
  const box = createSecretBox(key)
  if (options.readOnly) {
    return createSecretBox(key, { readOnly: { reason: 'restart it without KNOWHUB_SECRETS_READ_ONLY to write secrets', expectedKeyIds: [key.id] } })
  }
  const upgraded = await store.resources.upgradeSecrets(SECRET_BINDING_MIGRATION, ({ id, owner }, envelope) => {
    const next = box.upgrade(envelope, id, owner)
    return next === undefined ? undefined : { envelope: next, keyId: key.id }
  })
  if (upgraded) logger.info('secrets.upgraded', { name: SECRET_BINDING_MIGRATION, rewritten: upgraded.rewritten, unchanged: upgraded.unchanged })
  return box
}
