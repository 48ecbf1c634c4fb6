import { ChronicleMetrics } from './chronicle-metrics';

const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('ChronicleMetrics.exposition', () => {
  const sent = 'chronicle_mails_total{template="password-reset",outcome="sent"}';

  it('is the registry itself while there is no other source', async () => {
    const metrics = new ChronicleMetrics();
    metrics.mails.inc({ template: 'password-reset', outcome: 'sent' });
    expect(await metrics.exposition()).toBe(await metrics.registry.metrics());
  });

  it("adds a worker's series to the process's own, and drops them once the source is removed", async () => {
    const metrics = new ChronicleMetrics();
    metrics.mails.inc({ template: 'password-reset', outcome: 'sent' });
    const worker = new ChronicleMetrics();
    worker.mails.inc({ template: 'password-reset', outcome: 'sent' }, 2);
    worker.mails.inc({ template: 'password-changed', outcome: 'failed' });
    const remove = metrics.addSource(() => worker.registry.getMetricsAsJSON());

    const text = await metrics.exposition();
    expect(sample(text, sent)).toBe(3);
    expect(sample(text, 'chronicle_mails_total{template="password-changed",outcome="failed"}')).toBe(1);

    remove();
    expect(sample(await metrics.exposition(), sent)).toBe(1);
  });

  it("keeps the process's own metrics that no source reports, those prom-client would omit included", async () => {
    const metrics = new ChronicleMetrics({ processMetrics: true });
    metrics.addSource(() => new ChronicleMetrics().registry.getMetricsAsJSON());
    const text = await metrics.exposition();
    expect(sample(text, 'process_start_time_seconds')).toBeGreaterThan(0);
    expect(text).toContain('nodejs_version_info{');
  });
});
