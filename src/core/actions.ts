/**
 * The roles and actions of KnowHub's role × action table (src/auth/policy.ts holds the table and
 * the checks). They live in the core so that the operations table (src/core/operations.ts) can name
 * the action each operation is checked against.
 */

/** The roles, highest first. */
export const ROLES = ['operator', 'admin', 'writer', 'reader'] as const
export type Role = (typeof ROLES)[number]

/** Every action the table rules on. */
export const ACTIONS = [
  'knowledge.read',
  'knowledge.write',
  'knowledge.manage',
  'resource.read',
  'resource.secret',
  'resource.write',
  'owner.name',
  'scope.public',
  'slim',
  'reown',
  'tokens.manage',
  'tokens.mint_admin',
  'tokens.mint_operator',
  'status',
  'status.hub',
  'backup',
  'metrics',
  'orgs.manage',
  'principals.forget',
  'retention.purge',
  'profile.read',
] as const
export type Action = (typeof ACTIONS)[number]
