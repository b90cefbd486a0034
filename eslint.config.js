// The import rules of DESIGN.md are enforced here: core is pure, adapters stay behind
// cluster.ts/collect.ts, and only cli.ts wires everything together.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const io = [
  'fs',
  'fs/promises',
  'net',
  'tls',
  'http',
  'https',
  'http2',
  'child_process',
  'dgram',
  'dns',
  'os',
  'readline',
];
const ioPaths = io.flatMap((m) => [m, `node:${m}`]);
const clients = ['react', 'react/*', 'ink', 'ink-*', 'ssh2', '@kubernetes/client-node'];

const restrict = (patterns, paths = []) => ({
  '@typescript-eslint/no-restricted-imports': [
    'error',
    {
      paths: paths.map((name) => ({ name, message: 'not allowed in this layer (DESIGN.md)' })),
      patterns: patterns.map((p) => ({
        group: [p.group].flat(),
        allowTypeImports: p.types ?? false,
        message: p.message,
      })),
    },
  ],
});

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'snapshots/', 'coverage/', '.scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        performance: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        setImmediate: 'readonly',
        queueMicrotask: 'readonly',
        structuredClone: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['src/core/**'],
    rules: {
      ...restrict(
        [
          {
            group: ['**/cluster/**', '**/tui/**', '**/output/**', '**/cli', '**/cli.js'],
            message: 'core/ imports only core/',
          },
          {
            group: clients,
            types: true,
            message: 'core/ is pure: no react, ink, ssh2 or client-node at run time',
          },
        ],
        ioPaths,
      ),
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'core/ is pure: take what you need as an argument' },
      ],
    },
  },
  {
    files: ['src/output/**'],
    rules: restrict(
      [
        {
          group: ['**/cluster/**', '**/tui/**', '**/cli', '**/cli.js'],
          message: 'output/ imports only core/',
        },
        {
          group: clients,
          types: true,
          message: 'output/ renders strings: no react, ink, ssh2 or client-node',
        },
      ],
      ioPaths,
    ),
  },
  {
    files: ['src/cluster/**'],
    rules: restrict([
      {
        group: ['**/tui/**', '**/output/**', '**/cli', '**/cli.js'],
        message: 'cluster/ may import core/, never tui/ or output/',
      },
      { group: ['react', 'ink', 'ink-*'], message: 'cluster/ has no UI' },
    ]),
  },
  {
    files: ['src/tui/**'],
    rules: restrict(
      [
        {
          group: ['**/cluster/**', '!**/cluster/cluster.js', '!**/cluster/collect.js'],
          message: 'tui/ uses cluster/cluster.ts and cluster/collect.ts only, never an adapter',
        },
        {
          group: ['ssh2', '@kubernetes/client-node'],
          types: true,
          message: 'tui/ never talks to a cluster directly',
        },
      ],
      ioPaths,
    ),
  },
);
