import {
  ENTITY_TAGS_SCHEMA,
  etagHeader,
  etagOf,
  heldVersion,
  ifMatchRevisions,
  parseEntityTags,
} from './entity-tags';

describe('etagOf', () => {
  it('writes a revision as a strong entity-tag', () => {
    expect(etagOf(0)).toBe('"0"');
    expect(etagOf(41)).toBe('"41"');
  });
});

describe('etagHeader', () => {
  it('documents the ETag header of a resource by its noun, as a string', () => {
    expect(etagHeader('customer')).toEqual({
      description: "The customer's version; send it as If-Match or If-None-Match.",
      schema: { type: 'string' },
    });
  });
});

describe('ENTITY_TAGS_SCHEMA', () => {
  const pattern = new RegExp(ENTITY_TAGS_SCHEMA.pattern);

  it.each(['*', '"3"', 'W/"3"', '"3", W/"4"', '"3",\t"x"', '""'])(
    'accepts %j as RFC 9110 writes it',
    (header) => {
      expect(pattern.test(header)).toBe(true);
    },
  );

  it.each(['3', '"3', '"3" "4"', 'W/ "3"', '* , "3"', '"a b"', ''])('refuses %j', (header) => {
    expect(pattern.test(header)).toBe(false);
  });
});

describe('parseEntityTags', () => {
  it('is undefined without the header', () => {
    expect(parseEntityTags(undefined, 'strong')).toBeUndefined();
    expect(parseEntityTags(undefined, 'weak')).toBeUndefined();
  });

  it.each(['*', '  *\t'])('reads %j as any version', (header) => {
    expect(parseEntityTags(header, 'strong')).toBe('*');
    expect(parseEntityTags(header, 'weak')).toBe('*');
  });

  it('reads each tag of a list, in order, around optional whitespace', () => {
    expect(parseEntityTags('"3", "0" ,"12"', 'strong')).toEqual([3, 0, 12]);
    expect(parseEntityTags(' "7" ', 'weak')).toEqual([7]);
  });

  it('takes weak tags only under the weak comparison', () => {
    expect(parseEntityTags('W/"3", "4"', 'weak')).toEqual([3, 4]);
    expect(parseEntityTags('W/"12", "340"', 'weak')).toEqual([12, 340]);
    expect(parseEntityTags('W/"3", "4"', 'strong')).toEqual([4]);
  });

  it('drops tags this service never issued: a leading zero, a sign, more than 15 digits, text', () => {
    expect(parseEntityTags('"07", "-1", "1234567890123456", "abc", "1.5", "", 5', 'weak')).toEqual([]);
    expect(parseEntityTags('"123456789012345"', 'strong')).toEqual([123456789012345]);
  });

  it('matches a whole tag, not a tag within a longer one', () => {
    expect(parseEntityTags('x"3"', 'strong')).toEqual([]);
    expect(parseEntityTags('"3"x', 'weak')).toEqual([]);
    expect(parseEntityTags('"3"x', 'strong')).toEqual([]);
    expect(parseEntityTags('w/"3"', 'weak')).toEqual([]);
  });
});

describe('ifMatchRevisions', () => {
  it('has nothing to check without the header or for *', () => {
    expect(ifMatchRevisions(undefined)).toBeUndefined();
    expect(ifMatchRevisions('*')).toBeUndefined();
  });

  it('compares strongly: a weak tag never matches, so an empty list (412)', () => {
    expect(ifMatchRevisions('W/"3"')).toEqual([]);
    expect(ifMatchRevisions('"3", W/"4"')).toEqual([3]);
  });
});

describe('heldVersion', () => {
  it('is false without the header', () => {
    expect(heldVersion(undefined, 3)).toBe(false);
  });

  it('is true for *, whatever the revision', () => {
    expect(heldVersion('*', 0)).toBe(true);
  });

  it('is true when a tag, weak or strong, names the revision, and false otherwise', () => {
    expect(heldVersion('"2", W/"3"', 3)).toBe(true);
    expect(heldVersion('"3"', 3)).toBe(true);
    expect(heldVersion('"2", W/"4"', 3)).toBe(false);
    expect(heldVersion('"03"', 3)).toBe(false);
  });
});
