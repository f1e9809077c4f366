// Test runner configuration: unit tests beside the code, integration tests in test/integration.
import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // One copy of graphql-js: Vite would load our sources with graphql's ESM build while yoga and the
    // federation libraries load the CommonJS one, and `instanceof GraphQLError` would fail between them.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['src/**/*.test.ts', 'subgraphs/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['dist/**', 'node_modules/**', 'bench/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
