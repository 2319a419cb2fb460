import t from 'tap';
import { crossSiteGuard } from '../../protocol/cross-site-guard.js';

t.test('remembered verdicts stay right: asked again, past the bound, and for each check apart', async (t) => {
  const guard = crossSiteGuard(true, ['https://app.example.org']);
  for (let round = 0; round < 2; round++) {
    t.equal(guard({ host: 'evil.example.com' }), 'Host not allowed: evil.example.com', `round ${round}: a foreign Host`);
    t.equal(guard({ host: '127.0.0.1:8420' }), undefined, `round ${round}: a loopback Host`);
    t.equal(guard({ origin: 'http://evil.example.com' }), 'Origin not allowed: http://evil.example.com', `round ${round}: a foreign Origin`);
    t.equal(guard({ origin: 'https://app.example.org', host: '[::1]:8420' }), undefined, `round ${round}: an allowed Origin`);
    // A value judged as an Origin is judged again as a Host: the two checks remember apart.
    t.equal(guard({ host: 'https://app.example.org' }), 'Host not allowed: https://app.example.org', `round ${round}: an allowed Origin is no Host`);
  }
  // Many distinct names (a client cycling them) start the memory over; verdicts stay right.
  const wrong = Array.from({ length: 600 }, (_, i) => `h${i}.example.com`).filter((host) => guard({ host }) !== `Host not allowed: ${host}`);
  t.same(wrong, [], '600 distinct foreign Hosts, each refused');
  t.equal(guard({ host: 'localhost:1' }), undefined, 'a loopback Host after the memory started over');
  t.equal(guard({ host: 'evil.example.com' }), 'Host not allowed: evil.example.com', 'a foreign Host after the memory started over');
  t.equal(crossSiteGuard(false, [])({ host: 'evil.example.com' }), undefined, 'any Host when the service does not listen on loopback only');
});

t.test("the service's own origin, as the request's Host names it, is allowed where the Host is", async (t) => {
  const anyHost = crossSiteGuard(false, []);
  t.equal(anyHost({ origin: 'http://gpu-box:8420', host: 'gpu-box:8420' }), undefined, 'the console opened by the machine name');
  t.equal(anyHost({ origin: 'https://GPU-box:8420', host: 'gpu-box:8420' }), undefined, 'names compare without case');
  t.equal(anyHost({ origin: 'http://evil.example.com', host: 'gpu-box:8420' }), 'Origin not allowed: http://evil.example.com', 'another site');
  t.equal(anyHost({ origin: 'http://gpu-box:8420 gpu-box:8420', host: 'gpu-box:8420' }), 'Origin not allowed: http://gpu-box:8420 gpu-box:8420', 'a malformed Origin');
  t.equal(anyHost({ origin: 'null', host: 'gpu-box:8420' }), 'Origin not allowed: null');
  const loopback = crossSiteGuard(true, []);
  t.equal(loopback({ origin: 'http://gpu-box:8420', host: 'gpu-box:8420' }), 'Host not allowed: gpu-box:8420', 'on loopback only, a rebound name is refused by its Host');
});
