import { describe, expect, it } from 'vitest';
import { connectionTestResult, type TranscriptLine } from './connection-test.js';

const line = (at: number, from: 'client' | 'server', text: string): TranscriptLine => ({ at, from, text });

describe('connectionTestResult', () => {
  it('reads AUTH LOGIN with its 334 continuations as one step, and times STARTTLS up to the next command (its handshake)', () => {
    const result = connectionTestResult({
      startedAt: 0,
      endedAt: 100,
      failure: null,
      tls: null,
      lines: [
        line(5, 'server', '220 relay ESMTP'),
        line(6, 'client', 'EHLO me'),
        line(8, 'server', '250-relay\n250 STARTTLS'),
        line(9, 'client', 'STARTTLS'),
        line(10, 'server', '220 2.0.0 go ahead'),
        line(30, 'client', 'EHLO me'),
        line(32, 'server', '250 relay'),
        line(33, 'client', 'AUTH LOGIN'),
        line(34, 'server', '334 VXNlcm5hbWU6'),
        line(35, 'client', '/* user */'),
        line(36, 'server', '334 UGFzc3dvcmQ6'),
        line(37, 'client', '/* secret */'),
        line(40, 'server', '235 2.7.0 Authentication successful'),
        line(41, 'client', 'QUIT'),
        line(42, 'server', '221 bye'),
      ],
    });
    expect(result.steps.map((step) => [step.step, step.ok, step.reply?.replyCode, step.durationMs])).toEqual([
      ['connect', true, 220, 5],
      ['ehlo', true, 250, 2],
      ['starttls', true, 220, 21],
      ['ehlo', true, 250, 2],
      ['auth', true, 235, 7],
      ['quit', true, 221, 1],
    ]);
    expect(result.steps[4]?.reply).toEqual({
      replyCode: 235,
      enhancedStatus: '2.7.0',
      text: '235 2.7.0 Authentication successful',
    });
    expect(result).toMatchObject({ ok: true, failedStep: null, reason: null, durationMs: 100 });
  });

  it('names the step left without a reply, and the failure as a paused account names it', () => {
    const result = connectionTestResult({
      startedAt: 0,
      endedAt: 50,
      tls: null,
      lines: [
        line(1, 'server', '220 relay'),
        line(2, 'client', 'EHLO me'),
        line(3, 'server', '250 relay'),
        line(4, 'client', 'AUTH PLAIN AHU...'),
      ],
      failure: {
        ok: false,
        stage: 'timeout',
        replyCode: null,
        enhancedStatus: null,
        text: 'Timeout',
        errorCode: 'ETIMEDOUT',
        refused: [],
      },
    });
    expect(result.steps.at(-1)).toEqual({ step: 'auth', ok: false, reply: null, durationMs: 46 });
    expect(result).toMatchObject({ ok: false, failedStep: 'auth', reason: 'AUTH: timeout: Timeout', stage: 'timeout' });
  });

  it('fails at connect when nothing was said at all', () => {
    const result = connectionTestResult({
      startedAt: 10,
      endedAt: 12,
      tls: null,
      lines: [],
      failure: {
        ok: false,
        stage: 'connect',
        replyCode: null,
        enhancedStatus: null,
        text: 'connect ECONNREFUSED',
        errorCode: 'ECONNREFUSED',
        refused: [],
      },
    });
    expect(result.steps).toEqual([{ step: 'connect', ok: false, reply: null, durationMs: 2 }]);
    expect(result.reason).toBe('connect: connect ECONNREFUSED');
  });
});
