/** The order of a mutant's spec files: by testMatch glob, then by size (see the sequencer). */
type FakeTest = {
  path: string;
  context: { config: { testMatch: string[] }; hasteFS: { getSize(path: string): number } };
};
const UnitFirstSequencer: new () => { sort(tests: FakeTest[]): FakeTest[] } =
  jest.requireActual('./unit-first-sequencer');

const root = '/repo';
const testMatch = [
  `${root}/libs/event-store/**/*.spec.ts`,
  `${root}/test/contract/event-store.embedded.spec.ts`,
  `${root}/libs/read-models/src/projection-processor*.spec.ts`,
];
const sizes = new Map([
  [`${root}/libs/read-models/src/projection-processor.spec.ts`, 10],
  [`${root}/test/contract/event-store.embedded.spec.ts`, 20],
  [`${root}/libs/event-store/src/processing/event-processor.spec.ts`, 900],
  [`${root}/libs/event-store/src/turns.spec.ts`, 30],
  [`${root}/test/e2e/elsewhere.e2e.spec.ts`, 1],
]);
const tests = [...sizes.keys()].map((path) => ({
  path,
  context: { config: { testMatch }, hasteFS: { getSize: (file: string) => sizes.get(file) ?? 0 } },
}));

describe('UnitFirstSequencer', () => {
  it('runs the files of an earlier glob first, however large, and the smaller first within one', () => {
    expect(new UnitFirstSequencer().sort(tests).map((test) => test.path.slice(root.length))).toEqual([
      '/libs/event-store/src/turns.spec.ts',
      '/libs/event-store/src/processing/event-processor.spec.ts',
      '/test/contract/event-store.embedded.spec.ts',
      '/libs/read-models/src/projection-processor.spec.ts',
      // Matched by none of the globs (jest would not run it): last.
      '/test/e2e/elsewhere.e2e.spec.ts',
    ]);
  });

  it('leaves the files it is given in their order', () => {
    const given = [...tests];
    new UnitFirstSequencer().sort(given);
    expect(given).toEqual(tests);
  });
});
