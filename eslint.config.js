// Lint rules: typescript-eslint's recommended set plus the import boundaries of STYLE.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { noImportCycle } from './scripts/eslint-no-import-cycle.js';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/peers/**', 'bench/results/**', '.switchyard/**', 'coverage/**', 'scratch/**'] },
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
  // Import direction (STYLE.md, docs/architecture.md), checked for every folder of src/:
  // errors → config → request → streaming → registry → {cache, telemetry} → {security, resilience} → gateway → subscriptions → plugins → router.ts → cli;
  // dashboard and graphiql read telemetry names only. The gateway (composition, plans, executors, the served
  // graph) is the engine the plugins drive, so it sits below them (decision 011).
  ...[
    ['src/errors/**/*.ts', ['streaming', 'subscriptions', 'config', 'request', 'registry', 'cache', 'telemetry', 'security', 'resilience', 'dashboard', 'graphiql', 'plugins', 'gateway', 'cli', 'router']],
    ['src/config/**/*.ts', ['streaming', 'subscriptions', 'request', 'registry', 'cache', 'telemetry', 'security', 'resilience', 'dashboard', 'graphiql', 'plugins', 'gateway', 'cli', 'router']],
    // The streaming layer (negotiation, framing, the stream record, HTTP streams) serves @defer and subscriptions alike.
    ['src/streaming/**/*.ts', ['registry', 'subscriptions', 'cache', 'telemetry', 'security', 'resilience', 'dashboard', 'graphiql', 'plugins', 'gateway', 'cli', 'router']],
    ['src/registry/**/*.ts', ['subscriptions', 'cache', 'telemetry', 'security', 'resilience', 'dashboard', 'graphiql', 'plugins', 'gateway', 'cli', 'router']],
    ['src/{cache,telemetry}/**/*.ts', ['subscriptions', 'security', 'resilience', 'dashboard', 'graphiql', 'plugins', 'gateway', 'cli', 'router']],
    ['src/{security,resilience}/**/*.ts', ['subscriptions', 'dashboard', 'graphiql', 'gateway', 'plugins', 'cli', 'router']],
    ['src/{dashboard,graphiql}/**/*.ts', ['subscriptions', 'registry', 'cache', 'security', 'resilience', 'gateway', 'plugins', 'cli', 'router']],
    ['src/gateway/**/*.ts', ['subscriptions', 'dashboard', 'graphiql', 'plugins', 'cli', 'router']],
    ['src/subscriptions/**/*.ts', ['dashboard', 'graphiql', 'plugins', 'cli', 'router']],
    ['src/plugins/**/*.ts', ['cli', 'router']],
  ].map(([files, forbidden]) => ({
    files: [files],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...forbidden.map((layer) => ({ group: [`**/${layer}/**`, `**/${layer}.js`], message: `imports flow errors → config → request → streaming → registry → cache/telemetry → security/resilience → gateway → subscriptions → plugins → router → cli (docs/architecture.md); this file may not import ${layer}` })),
            // Plugins meet through the request state or a module one layer down, never through each other.
            ...(files.startsWith('src/plugins/') ? [{ group: ['./use-*', '../use-*'], message: 'a plugin does not import another plugin: share through the request state or a module one layer down' }] : []),
          ],
        },
      ],
    },
  })),
  // Inside the gateway (issue 36): the planning executor drives planning and delivery, and delivery reads plans, so
  // imports flow execute/ → deliver/ → plan/, never back (the typescript-eslint rule, so the layer rule above still holds).
  ...[
    ['src/gateway/plan/**/*.ts', ['deliver', 'execute']],
    ['src/gateway/deliver/**/*.ts', ['execute']],
  ].map(([files, forbidden]) => ({
    files: [files],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: forbidden.flatMap((folder) => [`../${folder}/*`, `**/gateway/${folder}/**`]), message: 'inside the gateway imports flow execute/ → deliver/ → plan/ (issue 36): the executor drives both, delivery reads plans' }] },
      ],
    },
  })),
  {
    // The request state (decision 011) sits just above config: the types of the values it carries live in it or below (decision 025).
    files: ['src/request/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: [...['streaming', 'registry', 'cache', 'resilience', 'telemetry', 'security', 'dashboard', 'graphiql', 'plugins', 'gateway', 'subscriptions', 'cli'].map((layer) => `**/${layer}/**`), '**/router.js'], message: 'src/request/ sits just above config: it imports nothing from the layers above, not even types (decision 025)' }] },
      ],
    },
  },
  {
    // No import cycles anywhere in the product (they hide a layer in the wrong place), type-only imports
    // included: import-x/no-cycle skips those and has no option to count them, so the rule is ours
    // (scripts/eslint-no-import-cycle.js, decision 025).
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    plugins: { switchyard: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: { 'switchyard/no-import-cycle': 'error' },
  },
  {
    // Rooms small enough to change safely (issue 29): a function over 100 lines or with more than 6 parameters says why
    // in an eslint-disable comment at the function, or is split into named parts / given a context object.
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 100 }], 'max-params': ['error', 6] },
  },
  {
    // A room a newcomer can read whole (issue 36): a source file over 400 lines is split by concern, or says why
    // in an `eslint-disable max-lines -- <reason>` comment at its top.
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'max-lines': ['error', { max: 400 }] },
  },
  {
    // Only the CLI, the benchmark and tests print to stdout.
    files: ['src/cli/**/*.ts', 'bench/**/*.{ts,js}', 'test/**/*.ts', 'scripts/**/*.ts', 'subgraphs/*/main.ts'],
    rules: { 'no-console': 'off' },
  },
);
