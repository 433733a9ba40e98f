// Locks on a cluster, with the libraries unchanged (resplock --cluster 3 --replicas 1, or a real
// Redis Cluster): node-redlock 4.x given an ioredis Cluster client, whose SET NX PX and Lua
// release are routed by slot to the master owning each lock; and a Redisson-style lock over
// node-redis' createCluster, with Redisson's acquire and unlock scripts, the unlock announced
// by SPUBLISH from inside the script and waiters woken through SSUBSCRIBE on the node that owns
// the lock's slot (Redisson's sharded pub/sub in cluster mode). Workers on locks spread over
// every master increment a counter under the lock with a separate GET and SET: a lost
// increment, or two holders at once, fails the scenario. Last, the master of held locks fails
// (RESPLOCK.CLUSTER FAIL; SIGKILL and an election on a real cluster): see that step.
'use strict';
const IORedis = require('ioredis');
const Redlock = require('redlock');
const { createCluster } = require('redis');
const slotOf = require('cluster-key-slot');
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
    // The master holding a lock fails. Redis replicates asynchronously: a lock written on a
    // master that dies before its replica got it is gone after the election, and another
    // client acquires it while its first holder still believes it holds it (two holders).
    // node-redlock over one cluster is a single-instance lock there, and does nothing about
    // it; Redisson waits for the replicas after acquiring (WAIT, its checkLockSyncedSlaves),
    // which is what closes that window. Here both locks are acknowledged by WAIT 1 on the
    // connection that took them, as Redisson does, so on resplock as on a real cluster the
    // replica has them when it takes over: the locks survive, a second client is refused,
    // the holders extend and release them on the new master, and a Redisson waiter blocked
    // on the lock's sharded channel acquires it once released, never before. (Without the
    // WAIT, a real cluster keeps the lock only when replication won the race with the kill,
    // which on loopback is nearly always; RESPLOCK.CLUSTER FAIL always lets the replica
    // apply what its master acknowledged before it takes over.)
    ['a lock\'s master fails while the lock is held: the locks survive on the new master', async () => {
      const victim = await ctl.owner(await ctl.keyslot('held:{redlock}'));
      const pick = async (prefix) => {
        for (let i = 0; ; i++) if ((await ctl.owner(await ctl.keyslot(`${prefix}${i}`))) === victim) return `${prefix}${i}`;
      };
      const rl = await pick('held:redlock-');
      const rs = await pick('held:redisson-');
      const ioWait = async (key) => {
        const at = io.slots[slotOf(key)][0];
        const conn = io.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === at);
        return conn.call('WAIT', '1', '2000');
      };
      const nrWait = async (key) =>
        (await nr.nodeClient(nr.slots[slotOf(key)].master)).sendCommand(['WAIT', '1', '2000']);
      const lock = await redlock().lock(rl, 30000);
      check((await ioWait(rl)) === 1, 'the redlock write reached the replica (WAIT 1)');
      check((await nr.eval(ACQUIRE, { keys: [rs], arguments: ['30000', 'holder:1'] })) === null, 'Redisson lock taken');
      check((await nrWait(rs)) === 1, 'the Redisson lock reached the replica (WAIT 1)');
      // A Redisson waiter: subscribed to the lock's channel on the node owning its slot.
      let woken = 0;
      let wake = null;
      await nr.sSubscribe(`redisson_lock__channel:{${rs}}`, () => {
        woken++;
        if (wake) wake();
      });
      const fresh = await ctl.failMaster(victim);
      const addr = (await ctl.topology()).get(fresh).addr;
      check((await ctl.node(addr).get(rl)) === lock.value, 'the redlock lock is on the new master');
      check((await ctl.node(addr).hget(rs, 'holder:1')) === '1', 'the Redisson lock is on the new master');
      // The clients find the new master by themselves; the locks are held there.
      await ctl.wait(async () => (await io.pttl(rl)) > 0, 'ioredis to reach the new master');
      let refused = false;
      await redlock().lock(rl, 10000).catch((e) => {
        refused = e instanceof Redlock.LockError;
      });
      check(refused, 'a second redlock client is refused');
      let ttl = null;
      await ctl.wait(async () => {
        ttl = await nr.eval(ACQUIRE, { keys: [rs], arguments: ['30000', 'thief:1'] });
        return true;
      }, 'node-redis to reach the new master');
      check(ttl !== null && ttl > 0, `a second Redisson client is refused (${ttl})`);
      const waiter = (async () => {
        for (let i = 0; i < 100; i++) {
          const t = await nr.eval(ACQUIRE, { keys: [rs], arguments: ['30000', 'waiter:1'] });
          if (t === null) return Date.now();
          await new Promise((r) => {
            wake = r;
            setTimeout(r, Math.min(Number(t), 500));
          });
        }
        throw new Error('the waiter never acquired');
      })();
      await sleep(200);
      const extended = await lock.extend(30000);
      check((await io.pttl(rl)) > 20000, 'the holder extends its redlock lock on the new master');
      await extended.unlock();
      check((await io.exists(rl)) === 0, 'and releases it');
      await redlock().lock(rl, 1000).then((l) => l.unlock());
      const released = Date.now();
      const r = await nr.eval(UNLOCK, {
        keys: [rs, `redisson_lock__channel:{${rs}}`, `redisson_unlock_latch:{${rs}}:holder:1:0`],
        arguments: ['0', '30000', 'holder:1', 'spublish', '13500'],
      });
      check(r === 1, `the Redisson holder releases on the new master (${r})`);
      const acquired = await ctl.within(waiter, 10000, 'the Redisson waiter');
      check(acquired >= released, 'the waiter acquired only after the release');
      await nr.sUnsubscribe(`redisson_lock__channel:{${rs}}`);
      console.log(`     the Redisson waiter was woken by ${woken ? 'the unlock message' : 'its lease timer'}`);
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
