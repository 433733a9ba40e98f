// node-redis' createCluster against a cluster (resplock --cluster 3 --replicas 1, or a real
// Redis Cluster): reads and writes across slots, pipelines (execAsPipeline on one node over
// many slots, and commands sent at once, which node-redis pipelines per node), a slot migration
// followed through ASK then MOVED, a failover under writes with no acknowledged write lost, and
// a master that fails under writes, every write acknowledged by WAIT 1 read back from the new
// master (clusterctl.js).
'use strict';
const { createCluster } = require('redis');
const slotOf = require('cluster-key-slot');
const ctl = require('./clusterctl');

(async () => {
  const cluster = createCluster({
    rootNodes: ctl.NODES.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
  });
  cluster.on('error', () => {});
  await cluster.connect();
  const call = (c, a) => (c === 'set' ? cluster.set(a[0], a[1]) : cluster.get(a[0]));
  const failed = await ctl.scenario('node-redis-cluster', {
    set: (k, v) => cluster.set(k, v),
    get: (k) => cluster.get(k),
    pipeline: (ops) => {
      const m = cluster.multi();
      for (const [c, ...a] of ops) m[c](...a);
      return m.execAsPipeline();
    },
    many: (ops) => Promise.all(ops.map(([c, ...a]) => call(c, a))),
    // WAIT on the cluster's own client of the key's master (node-redis sends WAIT itself to
    // every master and answers the least, all_shards/agg_min, which is not this write's).
    ackedSet: async (k, v) => {
      ctl.check((await cluster.set(k, v)) === 'OK', `SET ${k}`);
      const client = await cluster.nodeClient(cluster.slots[slotOf(k)].master);
      return client.sendCommand(['WAIT', '1', String(ctl.WAIT_MS)]);
    },
  });
  await cluster.close();
  ctl.close();
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.log(`FAIL node-redis-cluster: ${e.stack}`);
  process.exit(1);
});
