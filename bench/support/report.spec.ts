import { gitRepository, type GitRepository, repositories } from './git-repository.spec-helper';
import { codeCommit, markdown, ratioFigure, type Report, single } from './report';

/** A git repository shaped like this one: code under apps/ and libs/, a lock file, bench results. */
function repository(): GitRepository {
  const repo = gitRepository('bench-report-');
  repo.write('apps/api/src/main.ts', 'export {};\n');
  repo.write('libs/auth/src/guard.ts', 'export {};\n');
  repo.write('package-lock.json', '{}\n');
  repo.write('bench/results/latest.md', '');
  repo.commit();
  return repo;
}

function report(sections: Record<string, { commit?: string; node?: string }>): Report {
  return {
    machine: { cpu: 'test', cores: 2, memoryGiB: 4, node: 'v24.0.0', platform: 'linux x64' },
    rounds: { rounds: 2, seconds: 3, warmupSeconds: 1 },
    benchmarks: Object.fromEntries(
      Object.entries(sections).map(([name, measuredOn]) => [
        name,
        {
          name,
          title: `the ${name} benchmark`,
          figures: [],
          notes: [],
          ranAt: '2026-11-26T00:00:00.000Z',
          ...measuredOn,
        },
      ]),
    ),
  };
}

/** The lines of one section, from its heading to the next. */
function section(text: string, name: string): string {
  const start = text.indexOf(`## ${name}:`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

describe('the benchmark report', () => {
  const fresh = repositories(repository);

  it('names the commit and the Node version each section was measured on', () => {
    const repo = fresh();
    const head = codeCommit(repo.root);
    const text = markdown(report({ read: { commit: head, node: 'v24.21.0' } }), repo.root);
    expect(section(text, 'read')).toContain(
      `Ran 2026-11-26T00:00:00.000Z on commit ${head.slice(0, 12)}, Node v24.21.0.`,
    );
    expect(section(text, 'read')).not.toContain('may not be current');
  });

  it('stays current when only files other than the code changed since', () => {
    const repo = fresh();
    const measured = codeCommit(repo.root);
    repo.write('bench/results/latest.md', '# figures\n');
    repo.write('docs/notes.md', 'words\n');
    // Specs and their helpers are not the service under test.
    repo.write('libs/auth/src/guard.spec.ts', 'it.todo("guards");\n');
    repo.write('libs/auth/src/guard.spec-helper.ts', 'export {};\n');
    repo.write('apps/api/src/main.spec.ts', 'it.todo("starts");\n');
    repo.commit();
    expect(
      section(markdown(report({ read: { commit: measured, node: 'v24.21.0' } }), repo.root), 'read'),
    ).not.toContain('may not be current');
  });

  it.each([
    ['apps/', 'apps/api/src/main.ts'],
    ['libs/', 'libs/auth/src/guard.ts'],
    ['the lock file', 'package-lock.json'],
  ])('says at its top that a section was measured on code that has changed since, in %s', (_, path) => {
    const repo = fresh();
    const measured = codeCommit(repo.root);
    repo.write(path, 'changed\n');
    repo.commit();
    const text = markdown(
      report({
        read: { commit: measured, node: 'v24.21.0' },
        write: { commit: codeCommit(repo.root), node: 'v24.21.0' },
      }),
      repo.root,
    );
    const [heading, , warning] = section(text, 'read').split('\n');
    expect(heading).toBe('## read: the read benchmark');
    expect(warning).toBe(
      `**Measured on code that has changed since: apps, libs, package-lock.json (specs aside) differ between ${measured.slice(0, 12)} ` +
        'and HEAD: these figures may not be current.**',
    );
    expect(section(text, 'write')).not.toContain('may not be current');
  });

  it('marks a commit -dirty when the code has uncommitted changes, and such a section as not current', () => {
    const repo = fresh();
    const head = codeCommit(repo.root);
    repo.write('bench/notes.md', 'not code\n');
    expect(codeCommit(repo.root)).toBe(head);
    repo.write('libs/auth/src/guard.ts', 'export const changed = true;\n');
    const dirty = codeCommit(repo.root);
    expect(dirty).toBe(`${head}-dirty`);
    const text = section(markdown(report({ read: { commit: dirty, node: 'v24.21.0' } }), repo.root), 'read');
    expect(text).toContain(
      `**Measured on uncommitted changes to ${head.slice(0, 12)}-dirty, which no commit pins`,
    );
    expect(text).toContain(`on commit ${head.slice(0, 12)}-dirty, Node v24.21.0.`);
  });

  it('says so of a section written before commits were recorded', () => {
    const repo = fresh();
    const text = section(markdown(report({ read: {} }), repo.root), 'read');
    expect(text).toContain('**Measured on code of an unknown commit: these figures may not be current.**');
    expect(text).toContain('on commit unknown, Node unknown.');
  });
});

describe('ratioFigure', () => {
  it.each([
    ['a rate at least 0.8 of the baseline', 90_000, 100_000, { kind: '>=', bound: 0.8 } as const, 0.9, true],
    ['a time at most 1.1 of the baseline', 2.4, 2, { kind: '<=', bound: 1.1 } as const, 1.2, false],
    [
      'a cost strictly below 1.5 of the smallest store',
      15,
      10,
      { kind: '<', bound: 1.5 } as const,
      1.5,
      false,
    ],
  ])('divides the medians, value over ceiling, and judges %s', (_, value, ceiling, target, ratio, met) => {
    const judged = ratioFigure({
      name: 'figure',
      unit: 'ms',
      value: { median: value, min: value / 2, max: value * 2 },
      ceiling: { name: 'ceiling', value: { median: ceiling, min: 0, max: ceiling * 3 } },
      target,
    });
    expect(judged.ratio).toBeCloseTo(ratio, 10);
    expect(judged.met).toBe(met);
  });

  it('leaves a ratio unjudged without a target', () => {
    const reported = ratioFigure({
      name: 'start-up',
      unit: 's',
      value: single(3),
      ceiling: { name: 'baseline', value: single(2) },
    });
    expect(reported.ratio).toBe(1.5);
    expect(reported.met).toBeUndefined();
  });
});

describe('a section measured against a baseline build', () => {
  const repo = repositories(repository)();

  it('names the baseline commit beside its own', () => {
    const head = codeCommit(repo.root);
    const measured = report({ write: { commit: head, node: 'v24.21.0' } });
    measured.benchmarks.write.baseline = `404f6ac964ec${'0'.repeat(28)}`;
    const text = section(markdown(measured, repo.root), 'write');
    expect(text).toContain(
      `on commit ${head.slice(0, 12)}, Node v24.21.0; against the build of 404f6ac964ec (the baseline), run ` +
        'beside it in the same run, rounds alternating.',
    );
  });

  it('names none when no baseline ran', () => {
    const head = codeCommit(repo.root);
    const text = section(markdown(report({ write: { commit: head, node: 'v24.21.0' } }), repo.root), 'write');
    expect(text).not.toContain('baseline');
  });
});
