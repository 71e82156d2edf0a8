import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { providerIdOfReply } from './reply.js';

describe('the provider id in a 250 reply', () => {
  it.each([
    [
      '250 Ok 0100018c2ab3c1e4-3b1f4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d-000000',
      '0100018c2ab3c1e4-3b1f4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d-000000',
    ],
    ['250 Ok: queued as 7oJ3cLZdR2KZQ5Z3lV4p3A', '7oJ3cLZdR2KZQ5Z3lV4p3A'],
    ['250 2.0.0 Ok: queued as 4XyZ12AbCd', '4XyZ12AbCd'],
    ['250 2.0.0 OK id=1rT9xK-0004Ab-3Q', '1rT9xK-0004Ab-3Q'],
    ['250 Ok <b6a1e0c2-9d9e-4c7a-8c4e-2f0f2f7e9a11>', 'b6a1e0c2-9d9e-4c7a-8c4e-2f0f2f7e9a11'],
    ['250 2.0.0 Ok: queued as 4XyZ12AbCd.', '4XyZ12AbCd'],
  ])('%s', (reply, id) => expect(providerIdOfReply(reply)).toBe(id));

  it.each([['250 Great success'], ['250 OK'], ['250 2.0.0 Ok'], ['250 Message accepted for delivery'], ['']])(
    'none in %j',
    (reply) => expect(providerIdOfReply(reply)).toBeNull(),
  );

  it('never throws and answers a bounded token on any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 2000 }), (text) => {
        const id = providerIdOfReply(text);
        expect(id === null || (id.length >= 1 && id.length <= 200 && !/\s/.test(id))).toBe(true);
      }),
    );
  });
});
