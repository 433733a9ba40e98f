// ioredis' Cluster against a cluster (resplock --cluster 3 --replicas 1, or a real Redis
// Cluster): reads and writes across slots, pipelines (one per node, over many slots, and
// auto-pipelining across nodes), a slot migration followed through ASK then MOVED, a failover
// under writes with no acknowledged write lost, and a master that fails under writes, every
// write acknowledged by WAIT 1 read back from the new master (clusterctl.js).
'use strict';
const IORedis = require('ioredis');
const slotOf = require('cluster-key-slot');
const ctl = require('./clusterctl');

(async () => {
  const cluster = new IORedis.Cluster(ctl.NODES, { enableAutoPipelining: true });
  const failed = await ctl.scenario('ioredis-cluster', {
    set: (k, v) => cluster.set(k, v),
    get: (k) => cluster.get(k),
    pipeline: async (ops) => {
      const p = cluster.pipeline();
      for (const [c, ...a] of ops) p[c](...a);
      return (await p.exec()).map(([err, r]) => {
        if (err) throw err;
        return r;
      });
    },
    many: (ops) => Promise.all(ops.map(([c, ...a]) => cluster[c](...a))),
    // WAIT on the Cluster's own connection to the node its slot map gives the key (the one
    // the SET just went to, after any redirect it followed).
    ackedSet: async (k, v) => {
      ctl.check((await cluster.set(k, v)) === 'OK', `SET ${k}`);
      const at = cluster.slots[slotOf(k)][0];
      const conn = cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === at);
      return conn.call('WAIT', '1', String(ctl.WAIT_MS));
    },
  });
  cluster.disconnect();
  ctl.close();
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.log(`FAIL ioredis-cluster: ${e.stack}`);
  process.exit(1);
});
