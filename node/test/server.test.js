'use strict';
// The helper against the locally built binary (RESPLOCK_BIN), with ioredis and node-redis.
const { test } = require('node:test');
const assert = require('node:assert');
const Redis = require('ioredis');
const { createClient } = require('redis');
const { startServer } = require('..');

// Clients are closed before the server stops (node's test hooks run in the order they were
// registered, so each test closes its clients itself, then this hook stops the server).
async function withServer(t) {
  const server = await startServer();
  t.after(() => server.stop());
  return server;
}

test('ioredis takes a lock through the returned options, and the clock expires it', async (t) => {
  const server = await withServer(t);
  const redis = new Redis(server.ioredis);
  try {
    await server.clock.freeze();
    assert.equal(await redis.set('lock:a', 'owner-1', 'PX', 30000, 'NX'), 'OK');
    assert.equal(await redis.set('lock:a', 'owner-2', 'PX', 30000, 'NX'), null);
    await server.clock.advance(30001);
    assert.equal(await redis.get('lock:a'), null);
    assert.equal(await redis.set('lock:a', 'owner-2', 'PX', 30000, 'NX'), 'OK');
  } finally {
    await redis.quit();
  }
});

test('node-redis connects with the returned options and sees an injected error once', async (t) => {
  const server = await withServer(t);
  const client = createClient(server.nodeRedis);
  await client.connect();
  try {
    await server.fault('ERROR', "READONLY You can't write against a read only replica.", { command: 'set', count: 1 });
    await assert.rejects(client.set('k', 'v'), /READONLY/);
    assert.equal(await client.set('k', 'v'), 'OK');
  } finally {
    await client.quit();
  }
});

test('a restart from a snapshot loses the lock taken after it', async (t) => {
  const server = await withServer(t);
  await server.snapshot('before');
  assert.equal(await server.command('SET', 'lock:a', 'owner-1', 'NX', 'PX', 30000), 'OK');
  assert.equal(await server.restart({ from: 'before' }), 'OK');
  assert.equal(await server.command('GET', 'lock:a'), null);
});

test('two servers are independent', async (t) => {
  const [a, b] = [await withServer(t), await withServer(t)];
  assert.notEqual(a.port, b.port);
  await a.command('SET', 'k', 'a');
  assert.equal(await b.command('GET', 'k'), null);
});

test('a binary that is not there is a clear error', async () => {
  await assert.rejects(startServer({ bin: '/nonexistent/resplock' }), /cannot run/);
});
