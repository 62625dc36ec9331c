/**
 * `knowhub/resources`: resources (code, credentials, cookies) with secrets encrypted
 * at rest (AES-256-GCM), and key loading and rotation.
 */
export { createResourceService, type ResourceService, type ResourceServiceDeps, type GetResourceOptions } from './service.js'
export { canReadSecrets, isExpired } from './view.js'
export { SecretKey, createSecretBox, type SecretBox } from './secrets.js'
export { loadOrCreateKey, writeKeyFile, type LoadKeyOptions, type SecretKeyring } from './key-file.js'
export { rotateSecrets, rotateKeyFile, checkSecretKey, type RotationReport, type KeyFileRotationReport, type SecretRewriter } from './rotate.js'
