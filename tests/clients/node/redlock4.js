// node-redlock 4.x with ioredis: SET NX PX and Lua release/extend on each node, quorum of 3.
// Nodes come from RESPLOCK_NODES; the clock and faults are driven with redis-cli, which sends
// nothing but the command (a paused node answers only RESPLOCK.* requests).
'use strict';
const { execFileSync } = require('child_process');
const Redis = require('ioredis');
const Redlock = require('redlock');

const NODES = process.env.RESPLOCK_NODES.split(',').map((n) => {
  const i = n.lastIndexOf(':');
  return { host: n.slice(0, i), port: Number(n.slice(i + 1)) };
});
const WORKERS = 20;
const ROUNDS = 5;
const results = { passed: 0, failed: 0 };

const clients = NODES.map(
  (n) =>
    new Redis({
      ...n,
      commandTimeout: 2000,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => 200,
    }),
);
// A stopped node's reconnect attempts are expected: keep them out of the report.
clients.forEach((c) => c.on('error', () => {}));

function control(i, ...args) {
  const { host, port } = NODES[i];
  return execFileSync('redis-cli', ['-h', host, '-p', String(port), ...args], {
    encoding: 'utf8',
  }).trim();
}
const advanceClock = (ms) => NODES.forEach((_, i) => control(i, 'RESPLOCK.CLOCK', 'ADVANCE', String(ms)));
const check = (cond, what) => {
  if (!cond) throw new Error(what);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const redlock = (opts = {}) =>
  new Redlock(clients, { driftFactor: 0.01, retryCount: 0, retryDelay: 50, retryJitter: 50, ...opts });
const onNodes = async () => (await Promise.all(clients.map((c) => c.exists('res').catch(() => 0)))).reduce((a, b) => a + b, 0);
async function eventually(cond, what, limit = 2000) {
  const end = Date.now() + limit;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(what);
    await sleep(10);
  }
}

async function step(name, fn) {
  await Promise.all(clients.map((c) => c.flushall().catch(() => {})));
  const started = Date.now();
  try {
    await fn();
    results.passed++;
    console.log(`ok   redlock4.js: ${name} (${((Date.now() - started) / 1000).toFixed(2)}s)`);
  } catch (e) {
    results.failed++;
    console.log(`FAIL redlock4.js: ${name}\n${e.stack}`);
  }
}

async function rejects(p, what) {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error(what);
}

const steps = [
  ['acquire', async () => {
    const lock = await redlock().lock('res', 10000);
    check(lock.value, 'a token');
    await eventually(async () => (await onNodes()) === 3, 'held on every node');
  }],
  ['contention', async () => {
    await redlock().lock('res', 10000);
    const e = await rejects(redlock().lock('res', 10000), 'second locker fails at once');
    check(e instanceof Redlock.LockError, `a LockError: ${e}`);
    await rejects(redlock({ retryCount: 3 }).lock('res', 10000), 'second locker retries, then fails');
  }],
  ['extend', async () => {
    const lock = await redlock().lock('res', 10000);
    advanceClock(6000);
    await lock.extend(10000);
    await eventually(async () => (await Promise.all(clients.map((c) => c.pttl('res')))).every((t) => t > 9000), 'a full lease again');
  }],
  ['release', async () => {
    const lock = await redlock().lock('res', 10000);
    await lock.unlock();
    await eventually(async () => (await onNodes()) === 0, 'released everywhere');
  }],
  ['release by a non-owner', async () => {
    const lock = await redlock().lock('res', 10000);
    const forged = new Redlock.Lock(redlock(), 'res', 'not-the-owner', lock.expiration, 0);
    await rejects(forged.unlock(), 'a non-owner released the lock');
    check((await onNodes()) === 3, 'still held');
  }],
  ['mutual exclusion, 20 workers', async () => {
    const dl = redlock({ retryCount: 2000, retryDelay: 5, retryJitter: 5 });
    let inside = 0;
    let overlaps = 0;
    const worker = async () => {
      for (let i = 0; i < ROUNDS; i++) {
        const lock = await dl.lock('res', 10000);
        inside++;
        if (inside > 1) overlaps++;
        const n = Number((await clients[0].get('exclusion:counter')) || 0);
        await sleep(1);
        await clients[0].set('exclusion:counter', n + 1);
        inside--;
        await lock.unlock();
      }
    };
    await Promise.race([
      Promise.all(Array.from({ length: WORKERS }, worker)),
      sleep(120000).then(() => { throw new Error('workers still running after the time limit'); }),
    ]);
    check(overlaps === 0, `${overlaps} overlaps`);
    check(Number(await clients[0].get('exclusion:counter')) === WORKERS * ROUNDS, 'no lost update');
  }],
  ['expiry by moving the clock', async () => {
    await redlock().lock('res', 10000);
    await rejects(redlock().lock('res', 10000), 'held');
    advanceClock(10001);
    await redlock().lock('res', 10000);
  }],
  ['quorum with one node stopped and one paused', async () => {
    control(2, 'SHUTDOWN', 'NOSAVE');
    await sleep(100);
    const lock = await redlock().lock('res', 10000);
    await lock.unlock().catch(() => {}); // the stopped node cannot release: a partial unlock
    control(1, 'RESPLOCK.FAULT', 'PAUSE', '10000');
    try {
      await rejects(redlock().lock('res2', 10000), '1 of 3 is no quorum');
    } finally {
      control(1, 'RESPLOCK.FAULT', 'UNPAUSE');
    }
  }],
];

(async () => {
  // No offline queue: wait until every client is connected before the first step.
  await Promise.all(clients.map((c) => (c.status === 'ready' ? null : new Promise((r) => c.once('ready', r)))));
  for (const [name, fn] of steps) await step(name, fn);
  console.log(`redlock4.js: ${results.passed} passed, ${results.failed} failed`);
  clients.forEach((c) => c.disconnect());
  process.exit(results.failed ? 1 : 0);
})();
