// ioredis' Cluster against a cluster (resplock --cluster 3 --replicas 1, or a real Redis
// Cluster): reads and writes across slots, pipelines (one per node, over many slots, and
// auto-pipelining across nodes), a slot migration followed through ASK then MOVED, a failover
// under writes with no acknowledged write lost (clusterctl.js).
'use strict';
const IORedis = require('ioredis');
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
  });
  cluster.disconnect();
  ctl.close();
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.log(`FAIL ioredis-cluster: ${e.stack}`);
  process.exit(1);
});
