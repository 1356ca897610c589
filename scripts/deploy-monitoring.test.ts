import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { testSealingKeyBase64 } from '@svc/core';
import { startHarness, type Harness } from '../apps/server/src/testing/harness.js';
import { killStartedProcesses, startServiceProcess, type ServiceProcess } from '../apps/worker/src/fault/processes.js';
import { ROOT } from './local-runtime.js';

/**
 * deploy/: the Prometheus alert rules and the Grafana dashboard use only metric names that a running server and a
 * running worker serve, in PromQL that parses (with Prometheus's own Lezer grammar: promtool is not installed here),
 * and every rule has its one-line runbook in docs/operations.md.
 */
interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: { severity?: string };
  annotations?: { summary?: string; description?: string; runbook_url?: string };
}

const rules = (
  parseYaml(readFileSync(path.join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8')) as {
    groups: Array<{ name: string; rules: AlertRule[] }>;
  }
).groups.flatMap((group) => group.rules);
const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'deploy/grafana/svc-webhooks.json'), 'utf8')) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
};
const operations = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');

/** Grafana fills its variables in before Prometheus sees the query. */
const promql = (expr: string) => expr.replaceAll('$__rate_interval', '5m');

/** The syntax errors of a PromQL expression and the metric names its selectors use. */
function analyse(expr: string): { errors: string[]; metrics: string[] } {
  const errors: string[] = [];
  const metrics: string[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) errors.push(`at ${node.from}: ${JSON.stringify(expr.slice(node.from, node.from + 20))}`);
      if (node.name === 'VectorSelector') {
        const name = node.node.getChild('Identifier');
        expect(name, `a selector by metric name in ${expr}`).not.toBeNull();
        metrics.push(expr.slice(name!.from, name!.to));
      }
    },
  });
  return { errors, metrics };
}

const expressions = [
  ...rules.map((rule) => ({ where: `rule ${rule.alert}`, expr: rule.expr })),
  ...dashboard.panels.flatMap((panel) =>
    panel.targets.map((target) => ({ where: `panel ${panel.title}`, expr: promql(target.expr) })),
  ),
];

/** The sample names a /metrics text serves: each declared family, with a histogram's _bucket, _sum and _count. */
function servedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram' || type === 'summary')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

let h: Harness;
let worker: ServiceProcess;
let served: { server: Set<string>; worker: Set<string> };

beforeAll(async () => {
  h = await startHarness();
  worker = await startServiceProcess('worker', {
    DATABASE_URL: h.databaseUrl,
    // The harness's key: a worker checks it against the database at start.
    SVC_ENCRYPTION_KEY: testSealingKeyBase64(),
    SVC_PUBLIC_BASE_URL: 'http://svc.test',
    METRICS_PORT: '0',
    METRICS_HOST: '127.0.0.1',
  });
  await worker.waitFor('metrics served', 60_000);
  const announced = worker
    .output()
    .split('\n')
    .find((line) => line.includes('"msg":"metrics served"'));
  const port = announced ? (JSON.parse(announced) as { port: number }).port : undefined;
  expect(port).toBeDefined();
  const scrape = async (url: string) => {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    expect(response.status).toBe(200);
    return servedNames(await response.text());
  };
  served = {
    server: await scrape(`${h.rootUrl}/metrics`),
    worker: await scrape(`http://127.0.0.1:${port}/metrics`),
  };
}, 120_000);
afterAll(async () => {
  await worker?.stop();
  await killStartedProcesses();
  await h?.close();
});

describe('deploy/ monitoring', () => {
  it('has alert rules and dashboard panels on queue depth, oldest due age, attempts, circuits and admission refusals', () => {
    expect(rules.length).toBeGreaterThanOrEqual(10);
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(10);
    const used = new Set(expressions.flatMap(({ expr }) => analyse(expr).metrics));
    for (const name of [
      'svc_pending_deliveries',
      'svc_oldest_due_age_seconds',
      'svc_delivery_attempts_total',
      'svc_endpoint_circuits',
      'svc_admission_refusals_total',
    ])
      expect(used).toContain(name);
  });

  it('writes every expression in PromQL that parses', () => {
    for (const { where, expr } of expressions) expect(analyse(expr).errors, `${where}: ${expr}`).toEqual([]);
    // The check can fail: an unbalanced expression is refused.
    expect(analyse('sum(rate(svc_delivery_attempts_total[5m])').errors).not.toEqual([]);
  });

  it('uses only metric names that the running server and worker serve at /metrics', () => {
    expect(served.server.size).toBeGreaterThan(10);
    expect(served.worker.size).toBeGreaterThan(10);
    for (const { where, expr } of expressions)
      for (const name of analyse(expr).metrics) {
        expect(served.server, `${where} uses ${name}: not served by the server`).toContain(name);
        expect(served.worker, `${where} uses ${name}: not served by the worker`).toContain(name);
      }
  });

  it('gives every rule a severity, a summary and a runbook line in docs/operations.md', () => {
    const names = rules.map((rule) => rule.alert);
    expect(new Set(names).size).toBe(names.length);
    for (const rule of rules) {
      expect(['critical', 'warning', 'info'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      const anchor = `alert-${rule.alert.toLowerCase()}`;
      expect(rule.annotations?.runbook_url, rule.alert).toBe(`docs/operations.md#${anchor}`);
      const line = operations.split('\n').find((text) => text.includes(`<a id="${anchor}"></a>`));
      expect(line, `runbook of ${rule.alert}`).toBeDefined();
      expect(line).toContain(`\`${rule.alert}\``);
    }
  });
});
