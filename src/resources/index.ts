/**
 * `knowhub/resources`: resources (code, credentials, cookies) with secrets encrypted
 * at rest (AES-256-GCM), and key loading and rotation.
 */
export { createResourceService, canReadSecrets, isExpired, type ResourceService, type ResourceServiceDeps, type GetResourceOptions } from './service.js'
export {
  SecretKey,
  createSecretBox,
  loadOrCreateKey,
  rotateSecrets,
  rotateKeyFile,
  writeKeyFile,
  checkSecretKey,
  type SecretBox,
  type LoadKeyOptions,
  type RotationReport,
  type KeyFileRotationReport,
  type SecretRewriter,
} from './secrets.js'
