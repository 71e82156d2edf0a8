/**
 * The Grafana dashboard and the Prometheus alert rules in monitoring/, read as
 * Grafana and Prometheus read them (JSON, YAML, and `promtool check rules`
 * when promtool is installed), and held to what a real daemon process exports:
 * every PromQL expression names only metrics its GET /metrics serves, scraped
 * here with the metrics token Prometheus is meant to hold.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { serveUntilListening } from '../helpers/daemon-process.js';
import { tearDownProcesses } from '../helpers/process-teardown.js';
import { parsePrometheusText, type MetricFamily } from '../helpers/prometheus-text.js';
import { labelValuesMetric, promqlMetricNames } from '../helpers/promql-names.js';
import { api } from '../helpers/test-daemon.js';

const ROOT = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, ROOT), 'utf8');
const METRICS_TOKEN = 'prometheus-scrape-token-0123456789';
/** Series Prometheus makes itself, not the daemon: the scrape's own health. */
const PROMETHEUS_OWN = new Set(['up']);

interface Panel {
  id: number;
  type: string;
  title: string;
  targets?: Array<{ expr?: string; refId: string }>;
}
interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** The series names a scrape can hold: a histogram's as `_bucket`, `_sum` and `_count`. */
const seriesNames = (families: Map<string, MetricFamily>): Set<string> =>
  new Set(
    [...families.values()].flatMap((family) =>
      family.type === 'histogram' ? ['_bucket', '_sum', '_count'].map((end) => family.name + end) : [family.name],
    ),
  );

const hasPromtool = ((): boolean => {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
})();

describe('monitoring/: the Grafana dashboard and the Prometheus rules', () => {
  const started = tearDownProcesses({ stop: 'file' });
  let families: Map<string, MetricFamily>;
  let exported: Set<string>;
  const dashboard = JSON.parse(read('monitoring/grafana-dashboard.json')) as {
    panels: Panel[];
    templating: { list: Array<Record<string, any>> };
  };
  const rules = parseYaml(read('monitoring/prometheus-rules.yml')) as {
    groups: Array<{ name: string; rules: Rule[] }>;
  };
  const unknownIn = (expr: string): string[] =>
    promqlMetricNames(expr).filter((name) => !exported.has(name) && !PROMETHEUS_OWN.has(name));

  beforeAll(async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'mailproxy-monitoring-'));
    started.dirs.push(cwd);
    const { url } = await serveUntilListening(
      cwd,
      { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0', MAILPROXY_HTTP_METRICS_TOKEN: METRICS_TOKEN },
      started.running,
    );
    const scrape = await api(url, 'GET', '/metrics', { token: METRICS_TOKEN });
    expect(scrape.status).toBe(200);
    families = parsePrometheusText(scrape.text);
    exported = seriesNames(families);
  });

  it('reads the names out of PromQL, and so finds a misspelt one', () => {
    expect(
      promqlMetricNames(
        'histogram_quantile(0.99, sum by (le, ingress) (rate(mailproxy_intake_latency_seconds_bucket{instance=~"$i"}[5m]))) > 1',
      ),
    ).toEqual(['mailproxy_intake_latency_seconds_bucket']);
    expect(
      promqlMetricNames('mailproxy_store_used_bytes / on (instance) mailproxy_store_max_bytes > 0.8 or up == 0'),
    ).toEqual(['mailproxy_store_used_bytes', 'mailproxy_store_max_bytes', 'up']);
    expect(unknownIn('sum(rate(gmp_sent_total[5m])) / sum(rate(gmp_send_total[5m]))')).toEqual(['gmp_send_total']);
    expect(labelValuesMetric('label_values(mailproxy_build_info, instance)')).toBe('mailproxy_build_info');
  });

  it('scrapes the real process with the metrics token, which says its version', () => {
    const version = (JSON.parse(read('package.json')) as { version: string }).version;
    expect(families.get('mailproxy_build_info')?.samples).toEqual([
      { name: 'mailproxy_build_info', labels: { version, node: process.version }, value: 1 },
    ]);
  });

  it('names every counter of ours with _total and nothing else with it', () => {
    for (const family of families.values()) {
      if (!/^(mailproxy|gmp)_/.test(family.name)) continue;
      expect(family.type === 'counter', family.name).toBe(family.name.endsWith('_total'));
    }
  });

  it('the dashboard is valid JSON with panels whose every query names metrics the daemon exports', () => {
    const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
    expect(panels.length).toBeGreaterThan(10);
    expect(new Set(dashboard.panels.map((panel) => panel.id)).size).toBe(dashboard.panels.length);
    for (const panel of panels) {
      const exprs = (panel.targets ?? []).map((target) => target.expr ?? '');
      expect(exprs.length, panel.title).toBeGreaterThan(0);
      for (const expr of exprs) {
        expect(promqlMetricNames(expr).length, `${panel.title}: ${expr}`).toBeGreaterThan(0);
        expect(unknownIn(expr), `${panel.title}: ${expr}`).toEqual([]);
      }
    }
    const variables = dashboard.templating.list.filter((variable) => variable.type === 'query');
    expect(variables.length).toBeGreaterThan(0);
    for (const variable of variables) {
      const metric = labelValuesMetric(String(variable.query?.query ?? variable.query));
      expect(metric !== null && exported.has(metric), variable.name).toBe(true);
    }
  });

  it('charts every new intake counter and the paused-accounts gauge', () => {
    const charted = new Set(
      dashboard.panels.flatMap((panel) =>
        (panel.targets ?? []).flatMap((target) => promqlMetricNames(target.expr ?? '')),
      ),
    );
    for (const name of [
      'mailproxy_smtp_connections_total',
      'mailproxy_smtp_auth_failures_total',
      'mailproxy_smtp_rejections_total',
      'mailproxy_http_requests_total',
      'mailproxy_accounts_paused',
      'gmp_sent_total',
      'gmp_errors_total',
    ]) {
      expect(charted.has(name), name).toBe(true);
    }
  });

  it('the rules file parses as YAML; each alert has a severity and a summary and names metrics the daemon exports', () => {
    const all = rules.groups.flatMap((group) => group.rules);
    expect(all.length).toBeGreaterThan(10);
    expect(new Set(all.map((rule) => rule.alert)).size).toBe(all.length);
    for (const rule of all) {
      expect(['warning', 'critical'], rule.alert).toContain(rule.labels.severity);
      expect(rule.annotations.summary, rule.alert).toBeTruthy();
      expect(promqlMetricNames(rule.expr).length, rule.alert).toBeGreaterThan(0);
      expect(unknownIn(rule.expr), `${rule.alert}: ${rule.expr}`).toEqual([]);
    }
  });

  it.skipIf(!hasPromtool)('promtool check rules accepts the rules file', () => {
    // Throws with promtool's own words when a rule does not parse.
    const output = execFileSync('promtool', ['check', 'rules', 'monitoring/prometheus-rules.yml'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: 'pipe',
    });
    expect(output).toMatch(/SUCCESS: \d+ rules found/);
  });
  if (!hasPromtool)
    console.warn(
      'monitoring.test: promtool is not on the PATH: `promtool check rules` skipped (apt-get install prometheus, or the release tarball)',
    );
});
