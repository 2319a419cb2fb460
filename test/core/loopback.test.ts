import t from 'tap';
import { isLoopbackHost } from '../../core/loopback.js';

t.test('loopback names and addresses, bare, bracketed and with a port', async (t) => {
  const loopback = [
    'localhost', 'LOCALHOST', 'localhost:8420',
    '127.0.0.1', '127.0.0.1:8420', '127.1.2.3', '127.255.255.254:80',
    '::1', '[::1]', '[::1]:8420', '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1', '[::ffff:127.0.0.1]:8420', '[::ffff:7f00:1]', // the last as new URL() writes it
  ];
  for (const host of loopback) t.ok(isLoopbackHost(host), host);
});

t.test('anything else is not loopback', async (t) => {
  const others = [
    '', '0.0.0.0', '::', '128.0.0.1', '10.0.0.1', '192.168.1.1:8420', '::2', '[::2]:8420', '::ffff:10.0.0.1',
    'example.com', 'localhost.example.com', '127.0.0.1.example.com', 'evil-localhost', 'localhost:', 'localhost:abc',
    '127.0.0.1:80:80', '[::1', '[::1]x', '[::1]:abc', '127.0.0.256', '127.1',
  ];
  for (const host of others) t.notOk(isLoopbackHost(host), JSON.stringify(host));
});
