import { etagHeader } from './entity-tags';

describe('etagHeader', () => {
  it('documents the ETag header of a resource by its noun, as a string', () => {
    expect(etagHeader('customer')).toEqual({
      description: "The customer's version; send it as If-Match or If-None-Match.",
      schema: { type: 'string' },
    });
  });
});
