// Lint rules: typescript-eslint's recommended set plus the import boundaries of STYLE.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/peers/**', '.switchyard/**', 'coverage/**', 'scratch/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', Buffer: 'readonly', fetch: 'readonly', Response: 'readonly', Request: 'readonly', Headers: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  {
    // The demo subgraphs stand in for other teams' services: they import nothing from the router.
    files: ['subgraphs/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/src/**'], message: 'subgraphs must not import the router' }] }] },
  },
  // Import direction (STYLE.md): errors → config → {registry, cache, resilience, telemetry} → plugins → gateway → router.ts → cli.
  ...[
    ['src/errors/**/*.ts', ['config', 'registry', 'cache', 'resilience', 'telemetry', 'plugins', 'gateway', 'cli', 'router']],
    ['src/config/**/*.ts', ['registry', 'cache', 'resilience', 'telemetry', 'plugins', 'gateway', 'cli', 'router']],
    ['src/{registry,cache,resilience,telemetry}/**/*.ts', ['plugins', 'gateway', 'cli', 'router']],
    ['src/plugins/**/*.ts', ['cli', 'router']],
    ['src/gateway/**/*.ts', ['cli', 'router']],
  ].map(([files, forbidden]) => ({
    files: [files],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: forbidden.map((layer) => ({ group: [`**/${layer}/**`, `**/${layer}.js`], message: `imports flow errors → config → registry/cache/resilience/telemetry → plugins → gateway → router → cli; this file may not import ${layer}` })) }],
    },
  })),
  {
    // Only the CLI, the benchmark and tests print to stdout.
    files: ['src/cli/**/*.ts', 'bench/**/*.{ts,js}', 'test/**/*.ts', 'scripts/**/*.ts', 'subgraphs/*/main.ts'],
    rules: { 'no-console': 'off' },
  },
);
