// A test that reaches its end without one assertion cannot fail: it fails instead.
beforeEach(() => {
  expect.hasAssertions();
});
