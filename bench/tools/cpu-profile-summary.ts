/**
 * Summarises V8 CPU profiles (`node --cpu-prof`, or BENCH_CPU_PROF=<dir> for the bench's servers):
 * self time by function and by package, and total time (with callees) by function, heaviest first.
 * Usage: node -r @swc-node/register bench/tools/cpu-profile-summary.ts <file.cpuprofile> [top] [from-s to-s] [requests]
 * (from-s and to-s: only the samples taken that many seconds into the profile, e.g. after start-up;
 * requests: how many the server answered in that window, to show each entry in µs per request)
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** node_modules/<package> or our own source directory: where a frame's time is charged. */
function owner(url: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1];
  const own = /\/(apps|libs)\/([^/]+)\//.exec(url);
  if (own) return `${own[1]}/${own[2]}`;
  if (url.startsWith('node:')) return 'node core';
  return url === '' ? '(native/gc/idle)' : url;
}

function main(file: string, top: number, fromSeconds: number, toSeconds: number, requests: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfTime = new Map<number, number>();
  let elapsed = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    elapsed += delta;
    if (elapsed < fromSeconds * 1e6 || elapsed > toSeconds * 1e6) return;
    selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
  });
  const total = [...selfTime.values()].reduce((sum, time) => sum + time, 0);
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const nameOf = (frame: ProfileNode['callFrame']): string => {
    const where = frame.url.replace(/^.*\/(node_modules|dist)\//, '$1/');
    return `${frame.functionName || '(anonymous)'} ${where}:${frame.lineNumber + 1}`;
  };
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, time] of selfTime) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    functions.set(nameOf(frame), (functions.get(nameOf(frame)) ?? 0) + time);
    packages.set(owner(frame.url), (packages.get(owner(frame.url)) ?? 0) + time);
    // Total time: each function on the sampled stack, once per sample however deep it recurses.
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const caller = byId.get(at)?.callFrame;
      if (caller) onStack.add(nameOf(caller));
    }
    for (const name of onStack) inclusive.set(name, (inclusive.get(name) ?? 0) + time);
  }
  const print = (title: string, entries: Map<string, number>): void => {
    process.stdout.write(`\n${title}\n`);
    for (const [name, time] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      const perRequest = requests > 0 ? `${(time / requests).toFixed(1).padStart(7)} µs/req  ` : '';
      process.stdout.write(`${((100 * time) / total).toFixed(1).padStart(5)}%  ${perRequest}${name}\n`);
    }
  };
  process.stdout.write(`${file}: ${(total / 1e6).toFixed(1)} s sampled\n`);
  print('Self time by package', packages);
  print('Self time by function', functions);
  print('Total time (self and callees) by function', inclusive);
}

main(
  process.argv[2] ?? '',
  Number(process.argv[3] ?? 30),
  Number(process.argv[4] ?? 0),
  Number(process.argv[5] ?? Number.POSITIVE_INFINITY),
  Number(process.argv[6] ?? 0),
);
