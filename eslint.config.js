// @ts-check
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import checkFile from 'eslint-plugin-check-file'

export default tseslint.config(
  { ignores: ['.scratch/**', 'dist/**', 'node_modules/**', '.knowhub/**', 'bench/results/**', 'coverage/**', '.cache/**'] },
  js.configs.recommended,
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // File and folder names: kebab-case (rules in config, not prose).
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'examples/**/*.ts', 'web/**/*.ts', 'scripts/**/*.ts'],
    plugins: { 'check-file': checkFile },
    rules: {
      'check-file/filename-naming-convention': ['error', { '**/*.ts': 'KEBAB_CASE' }, { ignoreMiddleExtensions: true }],
      'check-file/folder-naming-convention': ['error', { '{src,test,bench,examples,web,scripts}/**/': 'KEBAB_CASE' }],
    },
  },
  {
    // Only the CLI's config module reads the environment; everything else receives options.
    files: ['src/**/*.ts'],
    ignores: ['src/cli/env.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read environment variables in src/cli/env.ts only, and pass the values down as options.',
        },
      ],
    },
  },
  {
    // Only entry points, benchmarks, examples and tests talk to the console.
    files: ['src/cli/**', 'bench/**', 'examples/**', 'test/**', 'bin/**', 'web/build.ts', 'scripts/**'],
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
