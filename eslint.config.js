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
  // Import direction (STYLE.md): errors → config → request → {registry, cache, resilience, telemetry, security} → plugins → gateway → router.ts → cli,
  // with two more edges: telemetry never imports resilience (resilience's attempt wrapper reports to telemetry, not the reverse),
  // and the gateway never imports plugins (they share what they must through src/request/).
  ...[
    ['src/errors/**/*.ts', ['config', 'request', 'registry', 'cache', 'resilience', 'telemetry', 'security', 'plugins', 'gateway', 'cli', 'router']],
    ['src/config/**/*.ts', ['request', 'registry', 'cache', 'resilience', 'telemetry', 'security', 'plugins', 'gateway', 'cli', 'router']],
    ['src/{registry,cache,resilience,security}/**/*.ts', ['plugins', 'gateway', 'cli', 'router']],
    ['src/telemetry/**/*.ts', ['resilience', 'plugins', 'gateway', 'cli', 'router']],
    ['src/plugins/**/*.ts', ['cli', 'router']],
    ['src/gateway/**/*.ts', ['plugins', 'cli', 'router']],
  ].map(([files, forbidden]) => ({
    files: [files],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: forbidden.map((layer) => ({ group: [`**/${layer}/**`, `**/${layer}.js`], message: `imports flow errors → config → request → registry/cache/resilience/telemetry/security → plugins → gateway → router → cli; this file may not import ${layer}` })) }],
    },
  })),
  {
    // The request state sits just above config: it may name the types of the values it carries (erased at build), never import code from above.
    files: ['src/request/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: [...['registry', 'cache', 'resilience', 'telemetry', 'security', 'plugins', 'gateway', 'cli'].map((layer) => `**/${layer}/**`), '**/router.js'], allowTypeImports: true, message: 'src/request/ sits just above config: it may import types from the layers above, not code' }] },
      ],
    },
  },
  {
    // One concern per plugin: plugins share per-request data through the request state (src/request/), not by importing each other.
    files: ['src/plugins/use-*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^\\./use-', message: 'plugins do not import each other: share through src/request/ or a module one layer down' },
            ...['cli', 'router'].map((layer) => ({ group: [`**/${layer}/**`, `**/${layer}.js`], message: `this file may not import ${layer}` })),
          ],
        },
      ],
    },
  },
  {
    // Only the CLI, the benchmark and tests print to stdout.
    files: ['src/cli/**/*.ts', 'bench/**/*.{ts,js}', 'test/**/*.ts', 'scripts/**/*.ts', 'subgraphs/*/main.ts'],
    rules: { 'no-console': 'off' },
  },
);
