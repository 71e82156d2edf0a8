import { describe, expect, it } from 'vitest';
import { verpAddress, verpMessagePk, verpTemplateProblem } from './verp.js';

const TEMPLATE = 'bounces+{id}@bounce.example.com';

describe('VERP', () => {
  it('names the message in the envelope sender and reads it back from a bounce address', () => {
    expect(verpAddress(TEMPLATE, 4711)).toBe('bounces+4711@bounce.example.com');
    expect(verpMessagePk(TEMPLATE, ['someone@example.org', 'Bounces+4711@Bounce.Example.COM'])).toBe(4711);
  });

  it('ignores addresses that do not fit the template or carry no number', () => {
    expect(
      verpMessagePk(TEMPLATE, [
        'bounces@bounce.example.com',
        'bounces+abc@bounce.example.com',
        'bounces+0@bounce.example.com',
        'bounces+1@other.example',
      ]),
    ).toBeNull();
    expect(verpMessagePk('', ['bounces+1@bounce.example.com'])).toBeNull();
  });

  it('validates a template', () => {
    expect(verpTemplateProblem('')).toBeNull();
    expect(verpTemplateProblem(TEMPLATE)).toBeNull();
    expect(verpTemplateProblem('bounces@bounce.example.com')).toMatch(/exactly once/);
    expect(verpTemplateProblem('bounces@{id}.example.com')).toMatch(/local part/);
    expect(verpTemplateProblem('bounces {id}@x')).not.toBeNull();
  });
});
