/**
 * The ways the daemon is installed start what package.json declares, and the
 * systemd unit is valid and hardened: the Dockerfile, the compose file and
 * the unit are read as the operator's tools read them (systemd-analyze for
 * the unit), not trusted to have been kept in step by hand.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const pkg = JSON.parse(read('package.json')) as { bin: Record<string, string>; scripts: Record<string, string> };
const entry = pkg.bin.mailproxy as string;

/** `Key=value` lines of a unit's [Service] section (the last one wins, as systemd reads them). */
function serviceKeys(unit: string): Map<string, string> {
  const section = unit.split(/^\[/m).find((part) => part.startsWith('Service]')) ?? '';
  return new Map(
    section
      .split('\n')
      .filter((line) => /^\w+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

describe('packaging', () => {
  it('package.json, the Dockerfile, the compose file and the unit all start `<bin> serve`', () => {
    expect(entry).toBe('dist/cli/main.js');
    expect(pkg.scripts.start).toBe(`node ${entry} serve`);

    const dockerfile = read('docker/Dockerfile');
    expect(dockerfile).toMatch(new RegExp(`^ENTRYPOINT \\["node", "${entry}"\\]$`, 'm'));
    expect(dockerfile).toMatch(/^CMD \["serve"\]$/m);
    // Compose builds that image and leaves its entry point and command alone.
    const compose = read('docker/compose.yaml');
    expect(compose).toMatch(/dockerfile: docker\/Dockerfile/);
    const mailproxyService = compose.slice(compose.indexOf('  mailproxy:'), compose.indexOf('  nats:'));
    expect(mailproxyService).not.toMatch(/^\s+(command|entrypoint):/m);

    const exec = serviceKeys(read('systemd/mailproxy.service')).get('ExecStart') ?? '';
    expect(exec).toMatch(new RegExp(`^/usr/bin/node /opt/mailproxy/${entry} serve( |$)`));
  });

  it('the container runs as a non-root user with a health check on /health and a data volume', () => {
    const dockerfile = read('docker/Dockerfile');
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK [\s\S]*\/health/m);
    expect(dockerfile).toMatch(/^VOLUME \["\/var\/lib\/mailproxy"\]$/m);
  });

  it("systemd-analyze verifies the unit, which is hardened and outlasts the daemon's own drain", () => {
    // Throws with systemd's own words when the unit does not verify.
    execFileSync('systemd-analyze', ['verify', 'systemd/mailproxy.service'], { cwd: new URL('../../', import.meta.url), stdio: 'pipe' });
    const keys = serviceKeys(read('systemd/mailproxy.service'));
    expect(keys.get('DynamicUser') === 'yes' || keys.has('User')).toBe(true);
    expect(
      Object.fromEntries(
        ['ProtectSystem', 'NoNewPrivileges', 'StateDirectory', 'RestartPreventExitStatus', 'AmbientCapabilities'].map((key) => [key, keys.get(key)]),
      ),
    ).toEqual({
      ProtectSystem: 'strict',
      NoNewPrivileges: 'yes',
      StateDirectory: 'mailproxy',
      RestartPreventExitStatus: '78',
      AmbientCapabilities: 'CAP_NET_BIND_SERVICE',
    });
    const stopSeconds = Number(/^(\d+)s$/.exec(keys.get('TimeoutStopSec') ?? '')?.[1]);
    expect(stopSeconds).toBeGreaterThan(configSchema.parse({}).shutdown_timeout_seconds);
  });

  it('reloads the certificate on systemctl reload, raises the descriptor limit, and scores an exposure of 2.0 or less', () => {
    const keys = serviceKeys(read('systemd/mailproxy.service'));
    expect(keys.get('ExecReload')).toBe('/bin/kill -HUP $MAINPID');
    expect(Number(keys.get('LimitNOFILE'))).toBeGreaterThanOrEqual(65_536);
    const hardening = [
      'SystemCallFilter',
      'ProtectClock',
      'ProtectKernelLogs',
      'ProtectHostname',
      'ProtectProc',
      'ProcSubset',
      'PrivateMounts',
      'RestrictRealtime',
    ];
    expect(Object.fromEntries(hardening.map((key) => [key, keys.get(key)]))).toEqual({
      SystemCallFilter: '@system-service',
      ProtectClock: 'yes',
      ProtectKernelLogs: 'yes',
      ProtectHostname: 'yes',
      ProtectProc: 'invisible',
      ProcSubset: 'pid',
      PrivateMounts: 'yes',
      RestrictRealtime: 'yes',
    });
    // V8's JIT writes the code it runs: a unit that denied it would not start node.
    expect(keys.has('MemoryDenyWriteExecute')).toBe(false);
    // systemd's own reading of the unit file, as `systemd-analyze security` shows an operator.
    const report = execFileSync('systemd-analyze', ['security', '--offline=true', 'systemd/mailproxy.service'], {
      cwd: new URL('../../', import.meta.url),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exposure = Number(/Overall exposure level for mailproxy\.service: ([\d.]+)/.exec(report)?.[1]);
    expect(exposure).toBeLessThanOrEqual(2.0);
  });
});
