/**
 * No known high or critical vulnerability in the production dependencies:
 * `npm audit --omit=dev --audit-level=high`. Skipped, saying why, only when the
 * registry's audit service cannot be reached or refuses the request; decided
 * by npm's JSON answer (an error object), never by the exit code alone.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface AuditAnswer {
  metadata?: { vulnerabilities?: Record<string, number> };
  vulnerabilities?: Record<string, { severity: string; via: unknown[] }>;
  error?: unknown;
  statusCode?: number;
  code?: string;
  message?: string;
}

/** 'unreachable: why' when npm could not ask the audit service; otherwise the high and critical findings. */
function verdict(answer: AuditAnswer): { unreachable: string } | { findings: string[] } {
  const network = /^(ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH)$/;
  if (
    answer.metadata?.vulnerabilities === undefined &&
    (answer.error !== undefined || answer.statusCode !== undefined)
  ) {
    const status = answer.statusCode ?? 0;
    const code = answer.code ?? (answer.error as { code?: string } | undefined)?.code ?? '';
    if (status >= 400 || network.test(code)) return { unreachable: answer.message ?? `${status} ${code}` };
    throw new Error(`npm audit failed for a reason other than the registry: ${JSON.stringify(answer).slice(0, 500)}`);
  }
  const findings = Object.entries(answer.vulnerabilities ?? {})
    .filter(([, found]) => found.severity === 'high' || found.severity === 'critical')
    .map(([name, found]) => `${name}: ${found.severity}`);
  return { findings };
}

function audit(): Promise<AuditAnswer> {
  return new Promise((resolve, reject) => {
    execFile(
      'npm',
      ['audit', '--omit=dev', '--audit-level=high', '--json'],
      { cwd: ROOT, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout) => {
        try {
          resolve(JSON.parse(stdout) as AuditAnswer);
        } catch {
          reject(error ?? new Error(`npm audit printed no JSON: ${stdout.slice(0, 300)}`));
        }
      },
    );
  });
}

describe('npm audit of the production dependencies', () => {
  it('tells an unreachable audit service from findings', () => {
    expect(verdict({ statusCode: 405, message: '405 Method Not Allowed', error: { summary: '' } })).toEqual({
      unreachable: '405 Method Not Allowed',
    });
    expect(verdict({ error: { code: 'ENOTFOUND' }, code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND' })).toEqual({
      unreachable: 'getaddrinfo ENOTFOUND',
    });
    expect(
      verdict({
        metadata: { vulnerabilities: { high: 1 } },
        vulnerabilities: { x: { severity: 'high', via: [] }, y: { severity: 'low', via: [] } },
      }),
    ).toEqual({ findings: ['x: high'] });
    expect(() => verdict({ error: { code: 'EJSONPARSE' }, code: 'EJSONPARSE' })).toThrow(/other than the registry/);
  });

  it('finds no high or critical vulnerability', async (context) => {
    const result = verdict(await audit());
    if ('unreachable' in result) {
      console.warn(
        `npm audit skipped: the registry's audit service is unreachable or refused the request (${result.unreachable})`,
      );
      context.skip();
      return;
    }
    expect(result.findings).toEqual([]);
  }, 90_000);
});
