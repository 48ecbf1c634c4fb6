import { type LoadFigures, loadFigures } from './load';
import { single } from './report';

function figures(cpuMs: number, rps: number): LoadFigures {
  return {
    cpuMsPerRequest: single(cpuMs),
    rps: single(rps),
    fullLoadCpuMsPerRequest: single(cpuMs),
    generatorCores: single(0.2),
    clientBoundRounds: 0,
    p50: single(20),
    p99: single(80),
    meanMs: single(20),
    pacedRps: single(rps / 2),
    requests: 10 * rps,
  };
}

describe('loadFigures', () => {
  const ceiling = { name: 'without a key', figures: figures(0.4, 2000) };

  it('judges the CPU ratio (ceiling over subject) by the target and the throughput ratio (subject over ceiling) by the throughput target', () => {
    const [cpu, throughput] = loadFigures({
      label: 'keyed',
      subject: figures(0.5, 1900),
      ceiling,
      target: { kind: '>=', bound: 0.9 },
      throughputTarget: { kind: '>=', bound: 0.9 },
    });
    expect(cpu).toMatchObject({ name: 'server CPU per request (keyed)', ratio: 0.8, met: false });
    expect(throughput).toMatchObject({ name: 'requests/s at full load (keyed)', ratio: 0.95, met: true });
  });

  it('leaves the throughput unjudged without a throughput target', () => {
    const [, throughput] = loadFigures({
      label: 'keyed',
      subject: figures(0.4, 1000),
      ceiling,
      target: { kind: '>=', bound: 0.9 },
    });
    expect(throughput.ratio).toBe(0.5);
    expect(throughput.target).toBeUndefined();
    expect(throughput.met).toBeUndefined();
  });
});
