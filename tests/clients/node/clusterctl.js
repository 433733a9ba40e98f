// Shared by the cluster scenarios (ioredis-cluster.js, node-redis-cluster.js): the cluster under
// test (every node's address in RESPLOCK_NODES, from run-all.sh's cluster mode: resplock
// --cluster 3 --replicas 1, or a real Redis Cluster of 6 redis-server nodes), driven by plain
// per-node connections with the commands an operator uses on a real cluster, so one scenario
// runs against both: SETSLOT IMPORTING/MIGRATING, the keys moved (MIGRATE on redis-server;
// RESPLOCK.CLUSTER MOVEKEYS on resplock, whose nodes share one process), SETSLOT NODE on every
// master; CLUSTER FAILOVER on a replica; a master that fails (RESPLOCK.CLUSTER FAIL on resplock;
// on redis-server the process killed with SIGKILL, its replica elected after
// cluster-node-timeout). CLUSTER_KIND says which of the two it is.
'use strict';
const IORedis = require('ioredis');
const slotOf = require('cluster-key-slot');

const NODES = process.env.RESPLOCK_NODES.split(',').map((a) => {
  const i = a.lastIndexOf(':');
  return { host: a.slice(0, i), port: Number(a.slice(i + 1)) };
});
const KIND = process.env.CLUSTER_KIND || 'resplock';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const conns = new Map();
// Ports of the nodes failed by failMaster (the address lists name a node 0.0.0.0 or
// 127.0.0.1): no longer asked anything.
const gone = new Set();
const key = ({ port }) => port;
// One plain connection per node address, reused.
function node({ host, port }) {
  const k = `${host}:${port}`;
  if (!conns.has(k)) conns.set(k, new IORedis({ host, port, maxRetriesPerRequest: 1, lazyConnect: false }));
  return conns.get(k);
}

// The cluster as the first node still up sees it: Map id -> {addr, master, of, slots, flags}.
async function topology() {
  const text = await node(NODES.find((a) => !gone.has(key(a)))).call('CLUSTER', 'NODES');
  const out = new Map();
  for (const line of text.trim().split('\n')) {
    const f = line.split(' ');
    const hp = f[1].split('@')[0];
    const i = hp.lastIndexOf(':');
    const slots = f
      .slice(8)
      .filter((s) => !s.startsWith('['))
      .map((s) => {
        const [a, b] = s.split('-');
        return [Number(a), Number(b ?? a)];
      });
    out.set(f[0], {
      addr: { host: hp.slice(0, i), port: Number(hp.slice(i + 1)) },
      master: f[2].includes('master'),
      flags: f[2],
      of: f[3],
      slots,
    });
  }
  return out;
}

async function owner(slot) {
  for (const [id, n] of await topology()) {
    if (n.master && n.slots.some(([a, b]) => a <= slot && slot <= b)) return id;
  }
  throw new Error(`no master serves slot ${slot}`);
}

const keyslot = (k) => node(NODES.find((a) => !gone.has(key(a)))).call('CLUSTER', 'KEYSLOT', k);

async function wait(cond, what, limit = 30000) {
  const end = Date.now() + limit;
  for (;;) {
    try {
      if (await cond()) return;
    } catch (_) {
      // not yet
    }
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await sleep(50);
  }
}

async function beginMigration(slot, dst) {
  const topo = await topology();
  const src = await owner(slot);
  await node(topo.get(dst).addr).call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', src);
  await node(topo.get(src).addr).call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', dst);
  return src;
}

// Moves up to count of the slot's keys from src to dst; resolves to how many moved.
async function moveKeys(slot, src, dst, count) {
  const topo = await topology();
  const s = node(topo.get(src).addr);
  const keys = await s.call('CLUSTER', 'GETKEYSINSLOT', slot, count);
  if (keys.length === 0) return 0;
  const { host, port } = topo.get(dst).addr;
  if (KIND === 'redis-server') await s.call('MIGRATE', host, port, '', 0, 5000, 'KEYS', ...keys);
  else await s.call('RESPLOCK.CLUSTER', 'MOVEKEYS', `${host}:${port}`, ...keys);
  return keys.length;
}

async function everyNodeSees(slot, addr) {
  for (const a of NODES.filter((n) => !gone.has(key(n)))) {
    for (const r of await node(a).call('CLUSTER', 'SLOTS')) {
      if (r[0] <= slot && slot <= r[1] && (r[2][0] !== addr.host || r[2][1] !== addr.port)) return false;
    }
  }
  return true;
}

async function endMigration(slot, src, dst) {
  const topo = await topology();
  const order = [dst, src, ...[...topo].filter(([i, n]) => n.master && i !== src && i !== dst).map(([i]) => i)];
  for (const id of order) await node(topo.get(id).addr).call('CLUSTER', 'SETSLOT', slot, 'NODE', dst);
  await wait(() => everyNodeSees(slot, topo.get(dst).addr), `every node to see slot ${slot} moved`);
}

// CLUSTER FAILOVER on master's replica; resolves to the replica's id once every node sees it
// as the master.
async function failover(master) {
  const topo = await topology();
  const [replica] = [...topo].find(([, n]) => n.of === master);
  const rep = node(topo.get(replica).addr);
  await rep.call('CLUSTER', 'FAILOVER');
  await wait(async () => (await rep.call('ROLE'))[0] === 'master', 'the replica to take over');
  const first = topo.get(master).slots[0][0];
  await wait(() => everyNodeSees(first, topo.get(replica).addr), 'every node to see the new master');
  return replica;
}

// Fails master (not gracefully): on resplock RESPLOCK.CLUSTER FAIL, sent to another node; on
// redis-server its process is killed (SIGKILL, its pid from INFO server) and its replica is
// elected once the others have flagged it fail (cluster-node-timeout, then the election).
// Resolves to the replica's id once every node still up sees it as the master.
// With how 'partition' (resplock only), RESPLOCK.CLUSTER PARTITION cuts the master off from
// the other nodes and its clients instead; its replica takes over the same way.
async function failMaster(master, how = 'fail') {
  const topo = await topology();
  const [replica] = [...topo].find(([, n]) => n.of === master);
  const addr = topo.get(master).addr;
  if (how === 'partition') {
    const other = NODES.find((a) => key(a) !== key(addr) && !gone.has(key(a)));
    await node(other).call('RESPLOCK.CLUSTER', 'PARTITION', master);
  } else if (KIND === 'redis-server') {
    const info = await node(addr).call('INFO', 'server');
    process.kill(Number(/process_id:(\d+)/.exec(info)[1]), 'SIGKILL');
  } else {
    const other = NODES.find((a) => key(a) !== key(addr) && !gone.has(key(a)));
    await node(other).call('RESPLOCK.CLUSTER', 'FAIL', master);
  }
  gone.add(key(addr));
  for (const [k, c] of conns) {
    if (k.endsWith(`:${addr.port}`)) {
      c.disconnect();
      conns.delete(k);
    }
  }
  const rep = node(topo.get(replica).addr);
  await wait(async () => (await rep.call('ROLE'))[0] === 'master', 'the replica to be elected', 60000);
  const first = topo.get(master).slots[0][0];
  await wait(() => everyNodeSees(first, topo.get(replica).addr), 'every node to see the new master');
  return replica;
}

// A promise that rejects after ms: a client's command to a node that died may wait for a
// reconnection that never comes.
const within = (p, ms, what) =>
  Promise.race([p, sleep(ms).then(() => { throw new Error(`${what}: no answer within ${ms} ms`); })]);

// RESPLOCK.CLUSTER HEAL ALL (resplock only): every node cut off comes back, a replaced
// master as a replica of its successor; resolves once they replicate again.
async function healAll() {
  const back = NODES.filter((a) => gone.has(key(a)));
  await node(NODES.find((a) => !gone.has(key(a)))).call('RESPLOCK.CLUSTER', 'HEAL', 'ALL');
  gone.clear();
  for (const a of back) {
    await wait(async () => /master_link_status:up/.test(await node(a).call('INFO', 'replication')),
      `${a.port} to replicate again`);
  }
  return back;
}

function close() {
  for (const c of conns.values()) c.disconnect();
}

// Runs the scenario's steps, printing the "ok"/"FAIL" lines run-all.sh counts.
async function runSteps(library, steps) {
  let passed = 0;
  let failed = 0;
  for (const [name, fn] of steps) {
    const started = Date.now();
    try {
      if ((await fn()) === 'n/a') {
        console.log(`n/a  ${library}: ${name}`);
        continue;
      }
      passed += 1;
      console.log(`ok   ${library}: ${name} (${((Date.now() - started) / 1000).toFixed(2)}s)`);
    } catch (e) {
      failed += 1;
      console.log(`FAIL ${library}: ${name}`);
      console.log(e && e.stack ? e.stack : String(e));
    }
  }
  console.log(`${library}: ${passed} passed, ${failed} failed`);
  return failed;
}

const check = (cond, what) => {
  if (!cond) throw new Error(what);
};

module.exports = {
  NODES, KIND, sleep, node, topology, owner, keyslot, wait, beginMigration, moveKeys,
  endMigration, failover, failMaster, healAll, within, close, runSteps, check, gone,
};

// The steps every cluster client goes through, given its commands: api.set(k, v), api.get(k),
// api.ackedSet(k, v) (SET, then WAIT 1 on the client's own connection to the node that took
// it; resolves to WAIT's answer),
// api.pipeline(ops) (ops [['set', k, v] | ['get', k]] whose keys one node serves, over several
// slots; resolves to their replies), api.many(ops) (the same across every node, sent at once).
async function scenario(library, api) {
  const steps = [
    ['reads and writes across slots', async () => {
      const keys = Array.from({ length: 300 }, (_, i) => `rw:${i}`);
      const slots = new Set();
      for (const k of keys.slice(0, 30)) slots.add(await keyslot(k));
      check(slots.size === 30, 'the keys spread over slots');
      const owners = new Set();
      for (const s of slots) owners.add(await owner(s));
      check(owners.size === 3, `the keys live on the three masters (${owners.size})`);
      for (const [i, k] of keys.entries()) check((await api.set(k, String(i))) === 'OK', `SET ${k}`);
      for (const [i, k] of keys.entries()) check((await api.get(k)) === String(i), `GET ${k}`);
    }],
    ['a pipeline across slots', async () => {
      const byNode = new Map();
      for (let i = 0; i < 200; i += 1) {
        const k = `pipe:${i}`;
        const o = await owner(await keyslot(k));
        if (!byNode.has(o)) byNode.set(o, []);
        byNode.get(o).push(k);
      }
      check(byNode.size === 3, 'the keys live on the three masters');
      for (const keys of byNode.values()) {
        const ops = keys.map((k) => ['set', k, k]).concat(keys.map((k) => ['get', k]));
        const got = await api.pipeline(ops);
        check(got.slice(0, keys.length).every((r) => r === 'OK'), 'every SET of the pipeline acknowledged');
        check(JSON.stringify(got.slice(keys.length)) === JSON.stringify(keys), 'every GET read back');
      }
      const all = Array.from({ length: 200 }, (_, i) => `many:${i}`);
      const sets = await api.many(all.map((k) => ['set', k, k]));
      check(sets.every((r) => r === 'OK'), 'commands sent at once to every node acknowledged');
      const gets = await api.many(all.map((k) => ['get', k]));
      check(JSON.stringify(gets) === JSON.stringify(all), 'and read back');
    }],
    ['a slot migration: ASK, then MOVED', async () => {
      const tag = '{mig}';
      const slot = await keyslot(tag);
      const keys = Array.from({ length: 40 }, (_, i) => `${tag}k${i}`);
      for (const k of keys) await api.set(k, k);
      const src = await owner(slot);
      const [dst] = [...(await topology())].find(([i, n]) => n.master && i !== src);
      await beginMigration(slot, dst);
      check((await moveKeys(slot, src, dst, 20)) === 20, 'half the keys moved');
      for (const k of keys) check((await api.get(k)) === k, `GET ${k} mid-migration`);
      check((await api.set(`${tag}born`, 'during')) === 'OK', 'SET a new key mid-migration');
      while (await moveKeys(slot, src, dst, 100));
      await endMigration(slot, src, dst);
      for (const k of keys) check((await api.get(k)) === k, `GET ${k} after the migration`);
      check((await api.get(`${tag}born`)) === 'during', 'the key written mid-migration');
      check((await owner(slot)) === dst, 'the slot has its new owner');
    }],
    ['a failover under writes: no acknowledged write lost', async () => {
      const slot = await keyslot('fo:{x}');
      const master = await owner(slot);
      const acked = [];
      const errors = [];
      let stop = false;
      const writer = (async () => {
        for (let i = 1; !stop; i += 1) {
          try {
            if ((await api.set(`fo:{x}${i}`, String(i))) === 'OK') acked.push(i);
          } catch (e) {
            errors.push(String(e));
            await sleep(50);
          }
        }
      })();
      await sleep(300);
      let fresh;
      try {
        fresh = await failover(master);
        await sleep(300);
      } finally {
        stop = true;
        await writer;
      }
      check(acked.length > 10, `writes went on (${acked.length} acknowledged, errors ${errors.slice(0, 3)})`);
      const lost = [];
      for (const i of acked) if ((await api.get(`fo:{x}${i}`)) !== String(i)) lost.push(i);
      check(lost.length === 0, `no acknowledged write lost (${lost.length} of ${acked.length}: ${lost.slice(0, 5)})`);
      check((await owner(slot)) === fresh, 'the replica serves the slot now');
      check((await api.set('fo:{x}n', 'after')) === 'OK' && (await api.get('fo:{x}n')) === 'after',
        'writes after the failover');
    }],
    ['a master fails under writes: every write WAIT acknowledged survives', () => masterFails(api)],
    ['resplock only: the failed master healed, then its successor partitioned under writes and healed',
      async () => {
        if (KIND !== 'resplock') return 'n/a';
        const [old] = await healAll();
        const topo = await topology();
        const me = [...topo].find(([, n]) => n.addr.port === old.port);
        check(me && !me[1].master, 'the failed master came back as a replica');
        await masterFails(api, 'partition');
        const [cut] = await healAll();
        const again = [...(await topology())].find(([, n]) => n.addr.port === cut.port);
        check(again && !again[1].master, 'the partitioned master came back as a replica');
        return undefined;
      }],
  ];
  return runSteps(library, steps);
}

// Writes (at most WRITES, for at most FAIL_BUDGET ms) go on over keys spread across every
// master while the master of some of their slots fails (not gracefully). A write counts as
// acknowledged only when its SET answered OK and WAIT 1 on the connection that wrote it
// answered 1 (its replica has it): those must all be read back afterwards, through the client
// and from the node now serving their slot. The client finds the new master by itself (its
// own refresh and retry paths); writes to the failed master's slots must succeed again after
// the failover (their WAIT answers 0 there: the new master has no replica left).
const WRITES = 20000;
// WAIT's timeout: a replica on loopback answers in a millisecond; a master left with no
// replica makes every write to it wait this long.
const WAIT_MS = 300;
module.exports.WAIT_MS = WAIT_MS;
const FAIL_BUDGET = 60000;
async function masterFails(api, how = 'fail') {
  const victim = await owner(await keyslot('mf:{victim}'));
  const victimSlots = (await topology()).get(victim).slots;
  const keys = Array.from({ length: WRITES }, (_, i) => `${how}:${i}`);
  const onVictim = new Set(keys.filter((k) => victimSlots.some(([a, b]) => a <= slotOf(k) && slotOf(k) <= b)));
  const acked = new Map();
  const errors = [];
  let failed = false;
  let before = 0;
  let afterOnVictim = 0;
  let afterAcked = 0;
  const end = Date.now() + FAIL_BUDGET;
  const writer = (async () => {
    for (const [i, k] of keys.entries()) {
      if (Date.now() > end || (failed && afterOnVictim >= 20 && afterAcked >= 20)) break;
      const v = `v${i}`;
      const victimKey = onVictim.has(k);
      try {
        const replicas = await within(api.ackedSet(k, v), 10000, `SET ${k}`);
        if (replicas >= 1) {
          acked.set(k, v);
          if (!failed && victimKey) before += 1;
          if (failed) afterAcked += 1;
        }
        if (failed && victimKey) afterOnVictim += 1;
      } catch (e) {
        errors.push(String(e));
        await sleep(50);
      }
    }
  })();
  let fresh;
  try {
    await sleep(500);
    fresh = await failMaster(victim, how);
  } finally {
    failed = true;
    await writer;
  }
  check(before > 0, `writes acknowledged on the failing master before it failed (${before})`);
  check(afterOnVictim >= 20,
    `the client writes to the new master by itself (${afterOnVictim} after the failover; ` +
    `${errors.length} errors: ${[...new Set(errors)].slice(-4).join(' | ')})`);
  check(afterAcked >= 20, `acknowledged writes went on after the failover (${afterAcked})`);
  check((await owner(await keyslot('mf:{victim}'))) === fresh, 'the replica serves the slots now');
  const topo = await topology();
  const lost = [];
  for (const [k, v] of acked) {
    const direct = await node(topo.get(await owner(await keyslot(k))).addr).get(k);
    if ((await api.get(k)) !== v || direct !== v) lost.push(k);
  }
  check(lost.length === 0, `no acknowledged write lost (${lost.length} of ${acked.size}: ${lost.slice(0, 5)})`);
  console.log(`     ${acked.size} writes acknowledged (${before} on the failed master), ` +
    `${errors.length} errors while it failed`);
}

module.exports.scenario = scenario;
