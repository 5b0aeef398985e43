import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Where a file may reach: the stages never call the jobs that compose them, and product code never runs the sandbox. */
const SANDBOX = {
  group: ['@recon/sandbox', '@recon/sandbox/*'],
  message:
    "recon's product code never imports the sandbox (a development package): only pipelines/demo.ts and cli/ may, when run.",
};
const PIPELINES = {
  regex: '(^|/)pipelines/',
  message: 'src/ holds the stages; pipelines/ composes them (and may import src/, never the reverse).',
};
const OUT_OF_PACKAGE = {
  regex: '^(\\.\\./){3,}(cli|src|pipelines|test|bench|scripts)/',
  message: "a package stands alone: it imports other packages by name, never recon's files by path.",
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'fixtures/', '.recon/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  { files: ['src/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [SANDBOX, PIPELINES] }] } },
  {
    files: ['pipelines/**/*.ts'],
    ignores: ['pipelines/demo.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [SANDBOX] }] },
  },
  {
    files: ['packages/protocol/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [SANDBOX, OUT_OF_PACKAGE] }] },
  },
  {
    files: ['packages/sandbox/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [OUT_OF_PACKAGE] }] },
  },
);
