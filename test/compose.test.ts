/**
 * docker-compose.yml must stay consistent with the services in the repo (DESIGN.md §8): every
 * directory under services/ other than the gateway gets one API and one worker container, the
 * gateway points at every API container, and the infrastructure the services talk to is there.
 * Reads the file only; needs no running stack and no Docker.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEPLOYED_NODE_FLAGS } from '../bench/support/process.js';

interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string; target?: string };
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | number | { target?: number; published?: string | number })[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[]; interval?: string; timeout?: string; retries?: number };
  restart?: string;
  volumes?: (string | { type?: string; source?: string; target?: string })[];
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services?: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
};
const services = compose.services ?? {};

/** Every service directory except the gateway: each one needs an API and a worker container. */
const domainServices = readdirSync(path.join(root, 'services'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== 'api-gateway')
  .map((entry) => entry.name)
  .sort();

/** `${VAR:-default}` → default, `${VAR}` → '' : the value the stack gets when nothing is exported. */
function withDefaults(value: string): string {
  return value.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?\}/g, (_, fallback: string | undefined) => fallback ?? '');
}

function env(service: ComposeService): Record<string, string> {
  const raw = service.environment ?? {};
  const entries = Array.isArray(raw)
    ? raw.map((item) => {
        const i = item.indexOf('=');
        return i < 0 ? [item, ''] : [item.slice(0, i), item.slice(i + 1)];
      })
    : Object.entries(raw).map(([k, v]) => [k, v === null ? '' : String(v)]);
  return Object.fromEntries(entries.map(([k, v]) => [k, withDefaults(v)]));
}

function commandLine(service: ComposeService): string {
  const part = (p: string | string[] | undefined) => (Array.isArray(p) ? p.join(' ') : (p ?? ''));
  return `${part(service.entrypoint)} ${part(service.command)}`.trim();
}

/** Built from the repo's Dockerfile: the services' image (no target: its last stage) unless `target` names another stage. */
function builtFromRepo(service: ComposeService, target?: string): boolean {
  const build = typeof service.build === 'string' ? { context: service.build } : service.build;
  if (!build) return false;
  const context = path.resolve(root, build.context ?? '.');
  return context === root && path.resolve(context, build.dockerfile ?? 'Dockerfile') === path.join(root, 'Dockerfile') && build.target === target;
}

function dependsOn(service: ComposeService): string[] {
  const deps = service.depends_on ?? [];
  return Array.isArray(deps) ? deps : Object.keys(deps);
}

/** depends_on as name → condition (the short list form means service_started). */
function conditions(service: ComposeService): Record<string, string> {
  const deps = service.depends_on ?? [];
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((d) => [d, 'service_started']));
  return Object.fromEntries(Object.entries(deps).map(([k, v]) => [k, v?.condition ?? 'service_started']));
}

function healthcheck(service: ComposeService): string {
  return JSON.stringify(service.healthcheck?.test ?? '');
}

function publishedPorts(service: ComposeService): string[] {
  return (service.ports ?? []).map((p) => (typeof p === 'object' ? `${p.published}:${p.target}` : String(p)));
}

/** `services/<name>/src/<file>.ts` run by the command, as a word of its own. */
function runs(service: ComposeService, entry: string): boolean {
  const escaped = entry.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[\\s/])${escaped}(\\s|$)`).test(commandLine(service));
}

function envVarFor(name: string): string {
  return `${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_URL`;
}

const gateway = services['api-gateway'];

describe('docker-compose.yml', () => {
  it('is a compose file with services, and the repo has domain services', () => {
    expect(Object.keys(services).length).toBeGreaterThan(0);
    expect(domainServices).toContain('admin');
  });

  describe.each(domainServices)('service %s', (name) => {
    const api = services[`${name}-api`];
    const worker = services[`${name}-worker`];

    it(`has a ${name}-api container running services/${name}/src/server.ts from the repo image`, () => {
      expect(api, `docker-compose.yml has no "${name}-api" service`).toBeDefined();
      expect(runs(api, `services/${name}/src/server.ts`), `command: ${commandLine(api)}`).toBe(true);
      expect(builtFromRepo(api), `${name}-api must be built from the repo's Dockerfile (build: .)`).toBe(true);
      expect(existsSync(path.join(root, 'services', name, 'src', 'server.ts'))).toBe(true);
    });

    it(`has a ${name}-worker container running services/${name}/src/worker.ts from the repo image`, () => {
      expect(worker, `docker-compose.yml has no "${name}-worker" service`).toBeDefined();
      expect(runs(worker, `services/${name}/src/worker.ts`), `command: ${commandLine(worker)}`).toBe(true);
      expect(builtFromRepo(worker), `${name}-worker must be built from the repo's Dockerfile (build: .)`).toBe(true);
      expect(existsSync(path.join(root, 'services', name, 'src', 'worker.ts'))).toBe(true);
      // The API runs the migrations first; started together on a fresh database, API and worker
      // race to create knex's migration tables and one of them dies.
      expect(dependsOn(worker), `${name}-worker must start after ${name}-api`).toContain(`${name}-api`);
    });

    it('reaches postgres, temporal and the SMTP catcher, and shares the identity secret', () => {
      for (const container of [api, worker]) {
        expect(container).toBeDefined();
        const e = env(container);
        expect(new URL(e.DATABASE_URL).hostname).toBe('postgres');
        expect(e.TEMPORAL_ADDRESS).toBe('temporal:7233');
        expect(new URL(e.SMTP_URL).hostname).toBe('maildev');
        expect(e.IDENTITY_SECRET.length).toBeGreaterThanOrEqual(32);
        expect(e.IDENTITY_SECRET).toBe(env(gateway).IDENTITY_SECRET);
        expect(dependsOn(container)).toEqual(expect.arrayContaining(['postgres', 'temporal']));
      }
    });

    it('API listens on 0.0.0.0 on its own port, with a /readyz healthcheck on that port', () => {
      const e = env(api);
      expect(e.HOST).toBe('0.0.0.0');
      expect(Number(e.PORT)).toBeGreaterThan(0);
      expect(healthcheck(api)).toContain('/readyz');
      expect(healthcheck(api)).toContain('process.env.PORT');
    });

    it('worker has a healthcheck on its health server\'s /readyz (WORKER_HEALTH_PORT)', () => {
      expect(Number(env(worker).WORKER_HEALTH_PORT)).toBeGreaterThan(0);
      expect(healthcheck(worker)).toContain('/readyz');
      expect(healthcheck(worker)).toContain('process.env.WORKER_HEALTH_PORT');
    });

    it('API and worker restart when they exit, and start only once what they need is healthy', () => {
      for (const container of [api, worker]) {
        expect(container.restart).toBe('unless-stopped');
        const c = conditions(container);
        expect(c).toMatchObject({ postgres: 'service_healthy', temporal: 'service_healthy', maildev: 'service_healthy' });
      }
      expect(conditions(worker)[`${name}-api`]).toBe('service_healthy');
      expect(conditions(gateway)[`${name}-api`]).toBe('service_healthy');
    });

    it(`is reachable from the gateway through ${envVarFor(name)}`, () => {
      expect(gateway).toBeDefined();
      const target = env(gateway)[envVarFor(name)];
      expect(target, `api-gateway has no ${envVarFor(name)}`).toBeDefined();
      const url = new URL(target);
      expect(url.hostname).toBe(`${name}-api`);
      expect(url.port).toBe(env(api).PORT);
      expect(dependsOn(gateway)).toContain(`${name}-api`);
    });
  });

  it('has the api-gateway, built from the repo, published on 8080, listening on 0.0.0.0', () => {
    expect(gateway).toBeDefined();
    expect(runs(gateway, 'services/api-gateway/src/server.ts'), `command: ${commandLine(gateway)}`).toBe(true);
    expect(builtFromRepo(gateway)).toBe(true);
    expect(publishedPorts(gateway)).toContain('8080:8080');
    const e = env(gateway);
    expect(e.HOST).toBe('0.0.0.0');
    expect(e.PORT).toBe('8080');
    expect(new URL(e.DATABASE_URL).hostname).toBe('postgres');
  });

  it('every service has a restart policy: long-running ones unless-stopped, one-shots on-failure', () => {
    for (const [name, service] of Object.entries(services)) {
      const oneShot = Object.values(services).some((s) => conditions(s)[name] === 'service_completed_successfully');
      expect(service.restart, name).toBe(oneShot ? 'on-failure' : 'unless-stopped');
    }
  });

  it('every depends_on waits for health (or a one-shot\'s success) of a service that has a healthcheck', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [dep, condition] of Object.entries(conditions(service))) {
        expect(services[dep], `${name} depends on unknown ${dep}`).toBeDefined();
        if (condition === 'service_completed_successfully') continue;
        expect(condition, `${name} → ${dep}`).toBe('service_healthy');
        expect(services[dep]!.healthcheck?.test, `${dep} has no healthcheck`).toBeDefined();
      }
    }
  });

  it('the gateway has a /readyz healthcheck and waits for postgres and every API to be healthy', () => {
    expect(healthcheck(gateway)).toContain('/readyz');
    expect(gateway.restart).toBe('unless-stopped');
    expect(conditions(gateway).postgres).toBe('service_healthy');
  });

  it('postgres, temporal and maildev have healthchecks', () => {
    expect(healthcheck(services.postgres)).toContain('pg_isready');
    expect(healthcheck(services.temporal)).toContain('temporal operator namespace describe');
    expect(healthcheck(services.maildev)).toContain('/healthz');
  });

  it('gives every API container a port of its own', () => {
    const ports = domainServices.map((name) => env(services[`${name}-api`] ?? {}).PORT);
    expect(new Set(ports).size).toBe(domainServices.length);
  });

  it('has no application container for a service that is not in services/', () => {
    const expected = new Set(['api-gateway', ...domainServices.flatMap((name) => [`${name}-api`, `${name}-worker`])]);
    const app = Object.entries(services)
      .filter(([, s]) => builtFromRepo(s))
      .map(([n]) => n);
    expect(app.filter((n) => !expected.has(n))).toEqual([]);
    for (const [key, value] of Object.entries(env(gateway))) {
      if (/_URL$/.test(key) && key !== 'DATABASE_URL') expect(Object.keys(services)).toContain(new URL(value).hostname);
    }
  });

  it('the benchmarks start each server with the node flags it is deployed with', () => {
    for (const [role, flags] of Object.entries(DEPLOYED_NODE_FLAGS)) {
      const words = (services[role]?.command as string[] | undefined) ?? [];
      expect(words[0], role).toBe('node');
      expect(words.slice(1, words.indexOf('--import')), role).toEqual(flags);
    }
  });

  describe('object storage (S3)', () => {
    const s3 = services.s3;
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    /** `FROM … AS <name>` stages of the Dockerfile, in order, each with its text. */
    const stages = dockerfile.split(/^(?=FROM\s)/m).filter((part) => /^FROM\s/.test(part));
    const stageNamed = (name: string) => stages.find((st) => new RegExp(`^FROM\\s+\\S+\\s+AS\\s+${name}\\s*$`, 'im').test(st.split('\n')[0]!));
    /** Services whose code stores files: admin (attachments) and knowledge (uploaded files). */
    const storing = ['admin', 'knowledge', 'cash-app', 'integrations'].filter((n) => domainServices.includes(n));

    it('has an s3 container built from the Dockerfile\'s s3 stage: versitygw from its Go module, the version npm start uses', () => {
      expect(s3, 'docker-compose.yml has no "s3" service').toBeDefined();
      expect(builtFromRepo(s3, 's3'), 's3 must be built from the repo Dockerfile with target: s3').toBe(true);
      const stage = stageNamed('s3');
      expect(stage, 'the Dockerfile has no "AS s3" stage').toBeDefined();
      const version = /github\.com\/versity\/versitygw\/cmd\/versitygw@(v[\d.]+)/.exec(readFileSync(path.join(root, 'scripts/local/versitygw.mjs'), 'utf8'))?.[1];
      expect(version).toBeDefined();
      // the binary comes from a build stage that go-installs the module at that version
      const from = /COPY --from=(\S+) \S*versitygw/.exec(stage!)?.[1];
      expect(from, 'the s3 stage copies versitygw from a build stage').toBeDefined();
      const build = stageNamed(from!)!;
      expect(build).toMatch(/^FROM golang:/);
      expect(build).toContain('go install "github.com/versity/versitygw/cmd/versitygw@${VERSITYGW_VERSION}"');
      expect(build).toContain(`ARG VERSITYGW_VERSION=${version}`);
      // the services' image stays the default target (the last stage)
      expect(stages.at(-1)).toMatch(/^FROM \S+ AS runtime\s/);
    });

    it('runs the posix backend on a named volume, with a healthcheck and a restart policy', () => {
      const line = commandLine(s3);
      expect(line).toMatch(/(^|\s)posix\s+\/data(\s|$)/);
      expect(line).toContain('--health /health');
      const port = /--port\s+\S*:(\d+)/.exec(line)?.[1];
      expect(port).toBe('7070');
      expect(s3.volumes).toContain('s3-data:/data');
      expect(Object.keys(compose.volumes ?? {})).toContain('s3-data');
      expect(healthcheck(s3)).toContain('http://127.0.0.1:7070/health');
      expect(s3.restart).toBe('unless-stopped');
      expect(publishedPorts(s3)).toContain('7070:7070');
      const e = env(s3);
      expect(e.ROOT_ACCESS_KEY_ID.length).toBeGreaterThan(0);
      expect(e.ROOT_SECRET_ACCESS_KEY.length).toBeGreaterThanOrEqual(8);
    });

    it.each(storing)('%s API and worker reach it with S3_ENDPOINT, S3_BUCKET and its credentials, once it is healthy', (name) => {
      const s3env = env(s3);
      for (const container of [services[`${name}-api`]!, services[`${name}-worker`]!]) {
        const e = env(container);
        const endpoint = new URL(e.S3_ENDPOINT);
        expect(endpoint.hostname).toBe('s3');
        expect(endpoint.port).toBe('7070');
        expect(new URL(e.S3_PUBLIC_ENDPOINT).port).toBe('7070');
        expect(e.S3_BUCKET).toMatch(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/);
        expect(e.S3_ACCESS_KEY_ID).toBe(s3env.ROOT_ACCESS_KEY_ID);
        expect(e.S3_SECRET_ACCESS_KEY).toBe(s3env.ROOT_SECRET_ACCESS_KEY);
        expect(conditions(container).s3).toBe('service_healthy');
      }
    });
  });

  it('has the local SMS sink built from the Dockerfile\'s sms-sink stage, and admin reaches it with its credentials once it is healthy', () => {
    const sink = services['sms-sink'];
    expect(sink, 'docker-compose.yml has no "sms-sink" service').toBeDefined();
    expect(builtFromRepo(sink!, 'sms-sink')).toBe(true);
    expect(readFileSync(path.join(root, 'Dockerfile'), 'utf8')).toMatch(/^FROM \S+ AS sms-sink\n[\s\S]*?CMD \["node", "--import", "tsx", "scripts\/local\/sms-sink\.ts"\]/m);
    expect(healthcheck(sink)).toContain('http://127.0.0.1:1090/healthz');
    expect(publishedPorts(sink)).toContain('1090:1090');
    const sinkEnv = env(sink!);
    for (const container of [services['admin-api']!, services['admin-worker']!]) {
      const e = env(container);
      expect(new URL(e.SMS_PROVIDER_URL).host).toBe('sms-sink:1090');
      expect(e.SMS_ACCOUNT_SID).toBe(sinkEnv.SMS_ACCOUNT_SID);
      expect(e.SMS_AUTH_TOKEN).toBe(sinkEnv.SMS_AUTH_TOKEN);
      expect(e.SMS_AUTH_TOKEN.length).toBeGreaterThanOrEqual(16);
      expect(conditions(container)['sms-sink']).toBe('service_healthy');
    }
  });

  it('has the infrastructure: postgres, temporal on it, temporal-ui and an SMTP catcher', () => {
    expect(services.postgres?.image).toMatch(/^postgres(:|$)/);
    expect(JSON.stringify(services.postgres?.healthcheck?.test ?? '')).toContain('pg_isready');

    const temporal = services.temporal;
    expect(temporal?.image).toMatch(/^temporalio\/(auto-setup|server)(:|$)/);
    const t = env(temporal);
    expect(t.DB).toMatch(/^postgres12/);
    expect(t.POSTGRES_SEEDS).toBe('postgres');
    expect(dependsOn(temporal)).toContain('postgres');

    expect(services['temporal-ui']?.image).toMatch(/^temporalio\/ui(:|$)/);
    expect(env(services['temporal-ui']).TEMPORAL_ADDRESS).toBe('temporal:7233');

    const smtp = services.maildev;
    expect(smtp?.image).toMatch(/^maildev\/maildev(:|$)/);
    expect(publishedPorts(smtp)).toEqual(expect.arrayContaining(['1025:1025', '1080:1080']));
  });
});
