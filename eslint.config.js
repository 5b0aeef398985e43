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
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A promise nobody awaits or catches is an unhandled rejection: in `recon serve`, a crash.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // recon's async functions without await are meant: they turn a throw into a rejection, implement an async
      // interface (a fake, a close()) or are async generators yielding from memory. None of its 42 findings was a bug.
      '@typescript-eslint/require-await': 'off',
      // Kysely's expression builder is destructured by design (`({ not, exists }) => ...`) though it declares methods.
      '@typescript-eslint/unbound-method': 'off',
      // Rejecting with an error caught or an abort's reason (unknown, any) passes it on; rejecting with a string does not.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  {
    // Tests parse JSON (recon's --json output, HTTP answers) and let expect() judge it: typing each parse adds nothing.
    files: ['test/**/*.ts', 'packages/*/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
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
