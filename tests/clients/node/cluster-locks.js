// Locks on a cluster, with the libraries unchanged (resplock --cluster 3 --replicas 1, or a real
// Redis Cluster): node-redlock 4.x given an ioredis Cluster client, whose SET NX PX and Lua
// release are routed by slot to the master owning each lock; and a Redisson-style lock over
// node-redis' createCluster, with Redisson's acquire and unlock scripts, the unlock announced
// by SPUBLISH from inside the script and waiters woken through SSUBSCRIBE on the node that owns
// the lock's slot (Redisson's sharded pub/sub in cluster mode). Workers on locks spread over
// every master increment a counter under the lock with a separate GET and SET: a lost
// increment, or two holders at once, fails the scenario.
'use strict';
const IORedis = require('ioredis');
const Redlock = require('redlock');
const { createCluster } = require('redis');
const ctl = require('./clusterctl');

const { check, sleep } = ctl;
const WORKERS = 12;
const ROUNDS = 5;
const LIBRARY = 'cluster-locks';

// Redisson's RedissonLock scripts (tryLockInnerAsync, unlockInnerAsync with the unlock latch),
// with the publish command an argument as Redisson passes it: SPUBLISH in sharded mode.
const ACQUIRE = `if ((redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then
  redis.call('hincrby', KEYS[1], ARGV[2], 1);
  redis.call('pexpire', KEYS[1], ARGV[1]);
  return nil;
end;
return redis.call('pttl', KEYS[1]);`;
const UNLOCK = `local val = redis.call('get', KEYS[3]);
if val ~= false then return tonumber(val); end;
if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end;
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1);
if (counter > 0) then
  redis.call('pexpire', KEYS[1], ARGV[2]);
  redis.call('set', KEYS[3], 0, 'px', ARGV[5]);
  return 0;
else
  redis.call('del', KEYS[1]);
  redis.call(ARGV[4], KEYS[2], ARGV[1]);
  redis.call('set', KEYS[3], 1, 'px', ARGV[5]);
  return 1;
end;`;

// Lock names whose slots fall on different masters, one per master.
async function namesOnEveryMaster(prefix) {
  const byMaster = new Map();
  for (let i = 0; byMaster.size < 3 && i < 1000; i++) {
    const name = `${prefix}${i}`;
    const master = await ctl.owner(await ctl.keyslot(name));
    if (!byMaster.has(master)) byMaster.set(master, name);
  }
  check(byMaster.size === 3, `lock names on 3 masters, got ${byMaster.size}`);
  return [...byMaster.values()];
}

// Runs `worker(lockName, id)` WORKERS times over the names, and checks that no two held a
// lock at once and no increment was lost.
async function exclusion(names, worker, counters) {
  const inside = new Map(names.map((n) => [n, 0]));
  let overlaps = 0;
  const critical = async (name) => {
    inside.set(name, inside.get(name) + 1);
    if (inside.get(name) > 1) overlaps++;
    const n = Number((await counters.get(`{${name}}:counter`)) || 0);
    await sleep(1);
    await counters.set(`{${name}}:counter`, String(n + 1));
    inside.set(name, inside.get(name) - 1);
  };
  const jobs = [];
  for (let w = 0; w < WORKERS; w++) jobs.push(worker(names[w % names.length], w, critical));
  await Promise.race([
    Promise.all(jobs),
    sleep(60000).then(() => {
      throw new Error('workers did not finish within 60 s');
    }),
  ]);
  check(overlaps === 0, `${overlaps} overlapping holders`);
  for (const [i, name] of names.entries()) {
    const expected = ROUNDS * Math.ceil((WORKERS - i) / names.length);
    const got = Number(await counters.get(`{${name}}:counter`));
    check(got === expected, `${name}: counter ${got}, expected ${expected}`);
  }
}

(async () => {
  const io = new IORedis.Cluster(ctl.NODES, { redisOptions: { maxRetriesPerRequest: 3 } });
  const nr = createCluster({
    rootNodes: ctl.NODES.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
  });
  nr.on('error', () => {});
  await nr.connect();
  const redlock = (opts = {}) =>
    new Redlock([io], { driftFactor: 0.01, retryCount: 0, retryDelay: 20, retryJitter: 20, ...opts });
  const owned = async (key) => {
    const n = ctl.node((await ctl.topology()).get(await ctl.owner(await ctl.keyslot(key))).addr);
    return n.exists(key);
  };

  const steps = [
    ['redlock over a Cluster client: each lock on the master owning its slot', async () => {
      const names = await namesOnEveryMaster('redlock:res-');
      const locks = [];
      for (const name of names) {
        locks.push(await redlock().lock(name, 10000));
        check((await owned(name)) === 1, `${name} held on its master`);
      }
      for (const name of names) {
        let refused = false;
        await redlock().lock(name, 10000).catch((e) => {
          refused = e instanceof Redlock.LockError;
        });
        check(refused, `a second holder of ${name} was refused`);
      }
      await locks[0].extend(20000);
      check((await io.pttl(names[0])) > 15000, 'extended');
      for (const lock of locks) await lock.unlock();
      for (const name of names) check((await io.exists(name)) === 0, `${name} released`);
    }],
    ['redlock mutual exclusion, 12 workers over 3 masters', async () => {
      const names = await namesOnEveryMaster('redlock:x-');
      const dl = redlock({ retryCount: 3000, retryDelay: 5, retryJitter: 5 });
      await exclusion(names, async (name, _w, critical) => {
        for (let i = 0; i < ROUNDS; i++) {
          const lock = await dl.lock(name, 10000);
          await critical(name);
          await lock.unlock();
        }
      }, io);
    }],
    ['Redisson-style lock woken by SPUBLISH over SSUBSCRIBE, 12 workers over 3 masters', async () => {
      const names = await namesOnEveryMaster('redisson:');
      // One subscription per lock channel shared by its waiters, as Redisson's LockPubSub.
      const waiters = new Map(names.map((n) => [n, []]));
      let woken = 0;
      for (const name of names) {
        await nr.sSubscribe(`redisson_lock__channel:{${name}}`, () => {
          woken++;
          for (const wake of waiters.get(name).splice(0)) wake();
        });
      }
      await exclusion(names, async (name, w, critical) => {
        const id = `client-${w}:1`;
        for (let i = 0; i < ROUNDS; i++) {
          for (;;) {
            const ttl = await nr.eval(ACQUIRE, { keys: [name], arguments: ['30000', id] });
            if (ttl === null) break;
            // Wait for the unlock message, or the lease, whichever comes first.
            await new Promise((wake) => {
              waiters.get(name).push(wake);
              setTimeout(wake, Math.min(Number(ttl), 2000));
            });
          }
          await critical(name);
          const r = await nr.eval(UNLOCK, {
            keys: [name, `redisson_lock__channel:{${name}}`, `redisson_unlock_latch:{${name}}:${id}:${i}`],
            arguments: ['0', '30000', id, 'spublish', '13500'],
          });
          check(r === 1, `unlock answered ${r}`);
        }
      }, nr);
      check(woken > 0, 'no waiter was woken by an unlock message');
      for (const name of names) await nr.sUnsubscribe(`redisson_lock__channel:{${name}}`);
    }],
  ];
  const failed = await ctl.runSteps(LIBRARY, steps);
  io.disconnect();
  await nr.close();
  ctl.close();
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.log(`FAIL ${LIBRARY}: ${e.stack}`);
  process.exit(1);
});
