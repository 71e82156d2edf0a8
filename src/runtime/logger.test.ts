import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

describe('logger', () => {
  it('writes JSON lines with secrets redacted at any usual depth', () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    log.info(
      {
        password: 'p1-secret',
        account: { password: 'p2-secret', host: 'h' },
        req: { headers: { authorization: 'Bearer t-secret' } },
        tenant: { client_auth: { token: 'c-secret' } },
        http: { admin_token: 'a-secret', metrics_token: 'm-secret' },
      },
      'something happened',
    );
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0] ?? '{}');
    expect(entry).toMatchObject({
      level: 'info',
      msg: 'something happened',
      account: { host: 'h', password: '[redacted]' },
    });
    expect(lines[0]).not.toMatch(/p1-secret|p2-secret|t-secret|c-secret|a-secret|m-secret/);
  });
});
