import t from 'tap';
import { ConfigError, parseConfig, loadConfig } from '../../supervisor/common/config.js';
import { indexTargets, normalizeAddress } from '../../core/targets.js';

t.test('defaults come from the embedded configuration', async (t) => {
  const config = loadConfig(undefined, { workspace: '/tmp/x' });
  t.equal(config.service.host, '127.0.0.1', 'loopback by default');
  t.equal(config.service.port, 8420);
  t.equal(config.service.upload_limit_bytes, 256 * 1024 * 1024);
  t.equal(config.service.token, null);
  t.same(config.targets, []);
  t.same(config.jobs, {});
  t.same(config.proxy, {});
  t.same(config.environment, {});
});

t.test('a full configuration is accepted', async (t) => {
  const config = parseConfig(
    `service:
  host: 0.0.0.0
  port: 9000
  workspace: /srv/ws
  token: abc
  upload_limit_bytes: 1024
targets:
  - address: http://gpu-2:8420
    token: t2
jobs:
  shell: { enable_serve: false }
proxy:
  tensorboard: { url: http://127.0.0.1:6006 }
environment:
  CUDA_VISIBLE_DEVICES: "0"
`,
    'cfg.yaml',
  );
  t.equal(config.service.port, 9000);
  t.equal(config.targets[0]?.token, 't2');
  t.same(config.jobs['shell'], { enable_serve: false });
  t.equal(config.proxy['tensorboard']?.url, 'http://127.0.0.1:6006');
});

t.test('bad configurations name the field', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['service: {port: 70000}', /service\.port: must be <= 65535/],
    ['service: {port: "x"}', /service\.port: must be integer/],
    ['service: {bogus: 1}', /service\.bogus: unknown field/],
    ['service: {prot: 1}', /service\.prot: unknown field; did you mean service\.port\?/],
    ['servce: {port: 1}', /servce: unknown field; did you mean service\?/],
    ['executor: {kind: slurmm}', /:\n {2}executor\.kind: must be one of "local", "slurm" \(got "slurmm"\)$/],
    ['surprise: 1', /surprise: unknown field/],
    ['targets: [{token: x}]', /targets\.0\.address/],
    ['jobs: {shell: {enable_serve: "yes"}}', /jobs\.shell\.enable_serve: must be boolean/],
    ['jobs: {shell: {fast: true}}', /jobs\.shell\.fast: unknown field/],
    ['proxy: {tb: {}}', /proxy\.tb\.url/],
    ['environment: {A: 1}', /environment\.A: must be string/],
    ['service: {upload_limit_bytes: 0}', /service\.upload_limit_bytes/],
    ['- just\n- a list', /must be a mapping with sections service, targets, jobs, proxy, environment, agent, executor, tasks/],
    ['service: [unclosed', /not valid YAML/],
  ];
  for (const [text, pattern] of cases) {
    t.throws(() => parseConfig(text, 'cfg.yaml'), pattern, text);
  }
  t.throws(() => loadConfig('/nonexistent/taskyard.yaml'), /cannot read configuration file \/nonexistent\/taskyard\.yaml: ENOENT/);
});

t.test('target addresses are normalised and checked', async (t) => {
  t.equal(normalizeAddress('http://Box:80/'), 'http://box:80');
  t.equal(normalizeAddress('box:9000'), 'http://box:9000');
  t.equal(normalizeAddress('https://box'), 'https://box:443');
  t.throws(() => normalizeAddress('ftp://box'), /unsupported scheme/);
  t.throws(() => normalizeAddress('http://u:p@box'), /credentials/);
  t.throws(() => normalizeAddress('http://box/path'), /path/);
  t.throws(() => indexTargets([{ address: 'http://a:1', token: null }, { address: 'http://A:1/', token: null }]), new ConfigError('targets.1.address: duplicate target http://a:1'));
});
