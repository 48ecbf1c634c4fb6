import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * The rules of a production-shaped compose stack and image (issue 16), checked on the files
 * themselves: nothing here can run Docker.
 */
const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  ports?: string[];
  environment?: Record<string, string | number>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  pull_policy?: string;
}

const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const dockerfile = read('Dockerfile');

describe('docker-compose.yml', () => {
  it('takes secrets from the uncommitted .env, never from the file itself', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [variable, value] of Object.entries(service.environment ?? {})) {
        if (/SECRET|PASSWORD|TOKEN/.test(variable)) {
          // Required from the environment (.env): compose refuses to start without it.
          expect({ service: name, variable, value }).toEqual({
            service: name,
            variable,
            value: expect.stringMatching(/^\$\{[A-Z_]+:\?[^}]+\}$/),
          });
        }
      }
    }
    expect(services.api.environment?.TOKEN_SECRET).toMatch(/^\$\{TOKEN_SECRET:\?/);
    expect(read('.gitignore').split('\n')).toContain('.env');
  });

  it('documents every variable it reads in .env.example, leaving the secret blank', () => {
    const example = read('.env.example');
    const documented = new Set([...example.matchAll(/^#? ?([A-Z_]+)=/gm)].map((match) => match[1]));
    const used = new Set([...read('docker-compose.yml').matchAll(/\$\{([A-Z_]+)/g)].map((match) => match[1]));
    expect(used.size).toBeGreaterThan(3);
    expect([...used].filter((variable) => !documented.has(variable))).toEqual([]);
    expect(example).toMatch(/^TOKEN_SECRET=$/m);
  });

  it("publishes only the API's port", () => {
    const published = Object.entries(services)
      .filter(([, service]) => (service.ports ?? []).length > 0)
      .map(([name, service]) => ({ name, ports: service.ports }));
    expect(published).toEqual([{ name: 'api', ports: ['${API_PORT:-3000}:3000'] }]);
  });

  it('reports MongoDB healthy only once it is the writable PRIMARY', () => {
    const test = services.mongodb.healthcheck!.test.join(' ');
    expect(test).toContain('db.hello().isWritablePrimary');
    expect(test).toMatch(/grep -qx PRIMARY/);
    // Not the old check, which passed as soon as rs.status() answered ok.
    expect(test).not.toMatch(/rs\.status\(\)\.ok/);
  });

  it('runs api and projector from one image, built once', () => {
    expect(services.projector.image).toBe(services.api.image);
    expect(services.api.build).toBeDefined();
    expect(services.projector.build).toBeUndefined();
    expect(services.projector.command).toEqual(['node', 'dist/apps/projector/src/main.js']);
  });

  it("checks the projector's health on its operator listener, which is not published", () => {
    expect(services.projector.environment?.METRICS_PORT).toBe(9464);
    expect(services.projector.healthcheck!.test.join(' ')).toContain('http://127.0.0.1:9464/health/ready');
    expect(services.projector.ports).toBeUndefined();
  });

  it('waits for healthy stores, each of which has a healthcheck', () => {
    for (const name of ['api', 'projector']) {
      for (const [dependency, { condition }] of Object.entries(services[name].depends_on ?? {})) {
        if (condition === 'service_healthy') expect(services[dependency].healthcheck).toBeDefined();
      }
      expect(services[name].depends_on?.mongodb).toEqual({ condition: 'service_healthy' });
    }
  });
});

describe('docker-compose.debug.yml', () => {
  it('publishes what it publishes on the loopback interface only', () => {
    const debug = parse(read('docker-compose.debug.yml')) as { services: Record<string, Service> };
    const ports = Object.values(debug.services).flatMap((service) => service.ports ?? []);
    expect(ports.length).toBeGreaterThan(0);
    expect(ports.filter((port) => !port.startsWith('127.0.0.1:'))).toEqual([]);
  });
});

describe('Dockerfile', () => {
  const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];

  it('builds on a supported Node LTS (22 or 24), every stage on the same base', () => {
    expect(base).toMatch(/^node:(22|24)[.-]/);
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((match) => match[1]);
    expect(froms).toEqual(['${NODE_IMAGE}', '${NODE_IMAGE}']);
  });

  it("has a HEALTHCHECK on the API's readiness", () => {
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n?.*\/health\/ready/m);
  });

  it("warms Node's code cache with a command that loads both apps' modules (run here on the build)", () => {
    const warm = /^ENV NODE_COMPILE_CACHE=(\S+)\nRUN node -e "([^"]+)"$/m.exec(dockerfile);
    expect(warm?.[1]).toBe('/app/.compile-cache');
    // Exactly as the image runs it: a module with a side effect at load, or a moved file, fails it.
    const cache = mkdtempSync(join(tmpdir(), 'compile-cache-'));
    try {
      execFileSync(process.execPath, ['-e', warm![2]], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, NODE_ENV: 'production', NODE_COMPILE_CACHE: cache },
        stdio: 'pipe',
      });
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it("runs Node with the young generation's bound npm scripts get from .npmrc", () => {
    const npmrc = /^node-options=(.+)$/m.exec(read('.npmrc'))?.[1];
    expect(npmrc).toMatch(/^--max-semi-space-size=\d+$/);
    // The final stage's, which the API and the projector run under.
    const image = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(/^ENV NODE_OPTIONS=(.+)$/m.exec(image)?.[1]).toBe(npmrc);
  });

  // No registry was reachable where this was written, so no real digest could be read; an
  // invented one would be worse than none. The Dockerfile says how to pin it.
  it.todo('pins the base image by digest (node:24-bookworm-slim@sha256:...)');
});
