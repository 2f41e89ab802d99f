// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'packages/*/dist/**', 'jest.config.js', 'eslint.config.mjs'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/require-await': 'off',
      eqeqeq: ['error', 'always'],
      curly: ['error', 'all'],
    },
  },
  {
    // The pure cores (bit layouts, the Java hash, the segment buffer, the snowflake clock logic)
    // import nothing from a framework, a driver or another layer: only each other, Node's own
    // modules, the coded domain error and the pure @shardleaf/java-hash package. Nest modules wire
    // them to Redis, MySQL, ZooKeeper, HTTP.
    files: ['src/**/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@nestjs/*', 'typeorm', 'typeorm/*', 'ioredis', 'ioredis/*', 'redlock', 'mysql2', 'mysql2/*',
                'node-zookeeper-client', 'fastify', 'fastify/*', 'pino', 'prom-client', 'rxjs', 'rxjs/*',
              ],
              message: 'core/ code is framework-free: no Nest, TypeORM, ioredis, ZooKeeper or driver imports (wire it in a Nest provider instead).',
            },
            {
              regex: '^\\.\\./(?!\\.\\./common/id-gen\\.error$)',
              message: 'core/ code imports only its own folder and common/id-gen.error.',
            },
          ],
        },
      ],
    },
  },
  {
    // Metrics and the dashboard read the queue's state through the one read port queue-id exports
    // (queue-state.port.ts), never its keys, registry, repositories or core. (core/ has its own rule.)
    files: ['src/metrics/**/*.ts', 'src/dashboard/**/*.ts'],
    ignores: ['src/**/core/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '/queue-id/(?!queue-state\\.port$|queue-id\\.module$)',
              message: 'metrics/ and dashboard/ read the queue through src/queue-id/queue-state.port.ts only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'packages/*/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
