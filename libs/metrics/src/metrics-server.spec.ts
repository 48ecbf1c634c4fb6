import { createServer } from 'node:net';
import { Logger } from '@nestjs/common';
import { ChronicleConfig } from '@chronicle/config';
import { ChronicleMetrics } from './chronicle-metrics';
import { MetricsServer } from './metrics-server';

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

describe('MetricsServer', () => {
  // Its log lines are asserted where they matter, never printed.
  let logged: jest.SpyInstance;
  let failed: jest.SpyInstance;
  beforeEach(() => {
    logged = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    failed = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('listens on METRICS_PORT: /metrics, added routes, 404, 405, and 500 for a failing route', async () => {
    const port = await freePort();
    const metrics = new ChronicleMetrics();
    metrics.rateLimitRejections.inc({ limit: 'reset-email' });
    const server = new MetricsServer({ metricsPort: port } as ChronicleConfig, metrics);
    server.route('/broken', () => Promise.reject(new Error('boom')));
    await server.onApplicationBootstrap();
    try {
      expect(server.port).toBe(port);
      const url = `http://127.0.0.1:${port}`;
      const scraped = await fetch(`${url}/metrics?ignored=1`);
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('chronicle_rate_limit_rejections_total{limit="reset-email"} 1');
      const head = await fetch(`${url}/metrics`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
      expect((await fetch(`${url}/nothing`)).status).toBe(404);
      const post = await fetch(`${url}/metrics`, { method: 'POST' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
      expect((await fetch(`${url}/broken`)).status).toBe(500);
      expect(failed).toHaveBeenCalledWith('/broken failed: boom');
      expect(logged).toHaveBeenCalledWith(`Metrics listening on port ${port}`);
    } finally {
      await server.onApplicationShutdown();
    }
    expect(server.port).toBeNull();
  });

  it('names METRICS_PORT when another process holds the port', async () => {
    const port = await freePort();
    const first = new MetricsServer({ metricsPort: port } as ChronicleConfig, new ChronicleMetrics());
    await first.onApplicationBootstrap();
    try {
      const second = new MetricsServer({ metricsPort: port } as ChronicleConfig, new ChronicleMetrics());
      await expect(second.onApplicationBootstrap()).rejects.toThrow(`METRICS_PORT ${port} is in use`);
    } finally {
      await first.onApplicationShutdown();
    }
  });

  it('does not listen when METRICS_PORT is 0', async () => {
    const server = new MetricsServer({ metricsPort: 0 } as ChronicleConfig, new ChronicleMetrics());
    await server.onApplicationBootstrap();
    expect(server.port).toBeNull();
    await server.onApplicationShutdown();
  });
});
