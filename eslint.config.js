// @ts-check
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['.scratch/**', 'dist/**', 'node_modules/**', '.knowhub/**', 'bench/results/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // Only entry points, benchmarks, examples and tests talk to the console.
    files: ['src/cli/**', 'bench/**', 'examples/**', 'test/**', 'bin/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: { 'no-console': 'off' },
  },
  {
    // The core layer does no I/O: no fs, no network, no database drivers.
    files: ['src/core/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: ['node:fs*', 'fs', 'node:net', 'node:http*', 'pg', '@electric-sql/*', '../store/*', '../knowledge/*', '../embed/*', '../cli/*'],
        },
      ],
    },
  },
)
