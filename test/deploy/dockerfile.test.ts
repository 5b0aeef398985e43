import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config/config.ts';
import { packageRoot } from '../../src/package-root.ts';
import { listeningUrls, startRecon } from '../cli/run-recon.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const root = packageRoot();
const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
/** The runtime stage: from its FROM to the end (it is the last stage, the image's default target). */
const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'));

/** The HEALTHCHECK's exec form, its instruction's continuation lines joined. */
function healthCheckCommand(): string[] {
  const lines = runtime.split('\n');
  let at = lines.findIndex((line) => line.startsWith('HEALTHCHECK '));
  let instruction = at < 0 ? '' : lines[at]!;
  while (instruction.endsWith('\\')) instruction = instruction.slice(0, -1) + ' ' + lines[++at]!.trim();
  const exec = /CMD (\[.*\])\s*$/.exec(instruction)?.[1];
  if (!exec) throw new Error('the runtime stage declares no HEALTHCHECK in exec form');
  return JSON.parse(exec) as string[];
}

describe("the production image's init and health check (no Docker engine here: what they run, run for real)", () => {
  it('runs recon under tini, which it installs', () => {
    expect(runtime).toMatch(/apt-get install [^\n]*\btini\b/);
    expect(runtime).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--", "recon"\]$/m);
  });

  it("probes the admin listener's /healthz at RECON_ADMIN_PORT, defaulting to recon's default", () => {
    const [program, flag, script] = healthCheckCommand();
    expect([program, flag]).toEqual(['node', '-e']);
    expect(script).toContain('/healthz');
    expect(script).toContain(`process.env.RECON_ADMIN_PORT || ${loadConfig({}).admin.port}`);
  });

  it("compose keeps the image's health check and init, checking only more often", () => {
    const compose = parseYaml(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as {
      'x-recon': { healthcheck?: { test?: unknown }; entrypoint?: unknown };
    };
    expect(compose['x-recon'].healthcheck?.test).toBeUndefined();
    expect(compose['x-recon'].entrypoint).toBeUndefined();
  });
});

describe.skipIf(!hasPostgres)("the image's health check command against recon serve (PostgreSQL)", () => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
  });
  afterAll(async () => testDb?.drop());

  it('passes while serve runs, and fails once it has stopped', async () => {
    const [program, ...args] = healthCheckCommand();
    const { baseUrl, port } = await refusingBaseUrl();
    const { port: adminPort } = await refusingBaseUrl();
    const check = () =>
      spawnSync(program === 'node' ? process.execPath : program!, args, {
        env: { ...process.env, RECON_ADMIN_PORT: String(adminPort) },
        timeout: 10_000,
      }).status;
    const serve = startRecon(['serve'], {
      ...testDb.env,
      RECON_SERVICE_URL: 'http://127.0.0.1:9',
      RECON_IDENTIFIER: 'HEALTH',
      RECON_SECRET: 'health-secret',
      RECON_PORT: String(port),
      RECON_ADMIN_PORT: String(adminPort),
      RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
    });
    try {
      await listeningUrls(serve);
      expect(check()).toBe(0);
    } finally {
      serve.child.kill('SIGTERM');
    }
    expect((await serve.done).code).toBe(0);
    expect(check()).toBe(1);
  }, 120_000);
});
