/**
 * The ways the daemon is installed start what package.json declares, and the
 * systemd unit is valid and hardened: the Dockerfile, the compose file and
 * the unit are read as the operator's tools read them (systemd-analyze for
 * the unit), not trusted to have been kept in step by hand.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../src/config/parse-config.js';
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
    execFileSync('systemd-analyze', ['verify', 'systemd/mailproxy.service'], {
      cwd: new URL('../../', import.meta.url),
      stdio: 'pipe',
    });
    const keys = serviceKeys(read('systemd/mailproxy.service'));
    expect(keys.get('DynamicUser') === 'yes' || keys.has('User')).toBe(true);
    expect(
      Object.fromEntries(
        ['ProtectSystem', 'NoNewPrivileges', 'StateDirectory', 'RestartPreventExitStatus', 'AmbientCapabilities'].map(
          (key) => [key, keys.get(key)],
        ),
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

  describe('the compose file, read as compose reads it (no Docker daemon here)', () => {
    interface ComposeService {
      ports?: string[];
      environment?: Record<string, string>;
      read_only?: boolean;
      cap_drop?: string[];
      security_opt?: string[];
      depends_on?: Record<string, { condition: string }>;
      healthcheck?: { test: string[] };
    }
    const compose = parseYaml(read('docker/compose.yaml')) as { services: Record<string, ComposeService> };
    const mailproxy = compose.services.mailproxy as ComposeService;
    const nats = compose.services.nats as ComposeService;
    const dockerfile = read('docker/Dockerfile');

    it('lets SMTP clients AUTH through the published port: allowed without TLS only because the port is on loopback', () => {
      // The image's own environment, then the service's, as the daemon in the container reads them.
      const imageEnv = Object.fromEntries(
        [...dockerfile.matchAll(/(MAILPROXY_[A-Z_]+)=(\S+)/g)].map((match) => [match[1], match[2]]),
      );
      const parsed = parseConfig(null, { ...imageEnv, ...mailproxy.environment });
      expect(parsed.ok).toBe(true);
      if (!parsed.ok) return;
      expect(parsed.config.smtp.allow_insecure_auth).toBe(true);
      expect(parsed.config.smtp.listen).toBe('0.0.0.0:2525');
      expect(mailproxy.ports?.length).toBeGreaterThan(0);
      for (const port of mailproxy.ports ?? []) expect(port).toMatch(/^127\.0\.0\.1:/);
    });

    it('runs both services without capabilities or privilege gain, mailproxy on a read-only root, after a healthy NATS', () => {
      for (const service of [mailproxy, nats]) {
        expect(service.cap_drop).toEqual(['ALL']);
        expect(service.security_opt).toContain('no-new-privileges:true');
      }
      expect(mailproxy.read_only).toBe(true);
      expect(mailproxy.depends_on).toEqual({ nats: { condition: 'service_healthy' } });
      expect(nats.healthcheck?.test.join(' ')).toMatch(/healthz/);
    });

    it('builds on a supported Node LTS and keeps node_modules and data/ (the secret key) out of the build context', () => {
      const majors = [...dockerfile.matchAll(/^FROM node:(\d+)-/gm)].map((match) => Number(match[1]));
      expect(majors.length).toBe(2);
      // Node 20's support ended in April 2026; 22 (to April 2027) and 24 (to April 2028) are LTS.
      for (const major of majors) expect([22, 24]).toContain(major);
      const ignored = read('.dockerignore')
        .split('\n')
        .map((line) => line.trim());
      for (const path of ['node_modules', 'data', 'dist', '.git']) expect(ignored).toContain(path);
    });
  });

  describe('the fleet compose file: three nodes on a three-server cluster, read as compose reads it', () => {
    interface FleetService {
      command?: string[];
      environment?: Record<string, string>;
      ports?: string[];
      volumes?: string[];
      read_only?: boolean;
      cap_drop?: string[];
      depends_on?: Record<string, { condition: string }>;
    }
    // Compose resolves `<<:` merge keys and `${VAR:?message}` from the operator's environment.
    const text = read('docker/fleet-compose.yaml').replace(/\$\{(MAILPROXY_[A-Z_]+):\?[^}]*\}/g, (_, name: string) =>
      name === 'MAILPROXY_SECRET_KEY' ? Buffer.alloc(32, 7).toString('base64') : 'fleet-admin-token-0123456789abcdef',
    );
    const services = (parseYaml(text, { merge: true }) as { services: Record<string, FleetService> }).services;
    const dockerfile = read('docker/Dockerfile');
    const imageEnv = Object.fromEntries(
      [...dockerfile.matchAll(/(MAILPROXY_[A-Z_]+)=(\S+)/g)].map((match) => [match[1], match[2]]),
    );
    const nodes = ['mailproxy1', 'mailproxy2', 'mailproxy3'].map((name) => services[name] as FleetService);
    const natsServers = ['nats1', 'nats2', 'nats3'].map((name) => services[name] as FleetService);

    it('gives each node its own id and volume, one secret key and admin token, and every cluster server', () => {
      const configs = nodes.map((node) => {
        const parsed = parseConfig(null, { ...imageEnv, ...node.environment });
        if (!parsed.ok) throw new Error(JSON.stringify(parsed));
        return parsed.config;
      });
      expect(new Set(configs.map((config) => config.fleet.node_id)).size).toBe(3);
      for (const config of configs) {
        expect(config.fleet.enabled).toBe(true);
        expect(config.fleet.replicas).toBe(3);
        expect(config.nats.url.split(',').sort()).toEqual([
          'nats://nats1:4222',
          'nats://nats2:4222',
          'nats://nats3:4222',
        ]);
        expect(config.security.secret_key).toBe(configs[0]?.security.secret_key);
        expect(config.http.admin_token).toBe(configs[0]?.http.admin_token);
      }
      expect(new Set(nodes.map((node) => node.volumes?.[0])).size).toBe(3);
      for (const node of nodes) {
        expect(node.read_only).toBe(true);
        expect(node.cap_drop).toEqual(['ALL']);
        expect(Object.keys(node.depends_on ?? {}).sort()).toEqual(['nats1', 'nats2', 'nats3']);
        for (const port of node.ports ?? []) expect(port).toMatch(/^127\.0\.0\.1:/);
      }
    });

    it('clusters the three nats servers with JetStream, each with its own name and store, routed to all three', () => {
      const option = (command: string[], name: string): string | undefined => command[command.indexOf(name) + 1];
      const names = natsServers.map((server) => option(server.command ?? [], '-n'));
      expect(new Set(names).size).toBe(3);
      for (const server of natsServers) {
        const command = server.command ?? [];
        expect(command).toContain('-js');
        expect(option(command, '--cluster_name')).toBe('mailproxy');
        expect(option(command, '--routes')?.split(',').sort()).toEqual([
          'nats://nats1:6222',
          'nats://nats2:6222',
          'nats://nats3:6222',
        ]);
      }
      expect(new Set(natsServers.map((server) => server.volumes?.[0])).size).toBe(3);
    });
  });
});
