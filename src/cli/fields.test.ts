import { describe, expect, it } from 'vitest';
import { fields, objectFields } from './fields.js';

describe('key: value blocks', () => {
  it('aligns the values of every level in one column and indents nested fields below their key', () => {
    expect(
      fields([
        ['id', 'main'],
        ['connections', { open: 0, in_use: 1 }],
        ['waiting', 3],
      ]),
    ).toBe(['id:       main', 'connections:', '  open:   0', '  in_use: 1', 'waiting:  3', ''].join('\n'));
  });

  it('prints a list one item a line, an object item with the dash on its first field, and an empty one as -', () => {
    expect(
      fields([
        ['rcpt_to', ['a@example.net', 'b@example.net']],
        ['refused', [{ address: 'c@example.net', reply: '550 no' }]],
        ['none', []],
      ]),
    ).toBe(
      [
        'rcpt_to:',
        '  - a@example.net',
        '  - b@example.net',
        'refused:',
        '  - address: c@example.net',
        '    reply:   550 no',
        'none:        -',
        '',
      ].join('\n'),
    );
  });

  it('shows the instants of any depth as UTC, epoch seconds (_ts) and ISO text (_at) alike', () => {
    const out = objectFields({
      created_at: '2026-11-23T21:17:58.123Z',
      last_error: { text: 'refused', at_ts: 1_795_591_558 },
    });
    expect(out).toBe(
      [
        'created_at: 2026-11-23 21:17:58Z',
        'last_error:',
        '  text:     refused',
        '  at_ts:    2026-11-25 07:25:58Z',
        '',
      ].join('\n'),
    );
  });
});
