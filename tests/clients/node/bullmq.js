// BullMQ, a job queue whose Lua scripts write every event to a stream (XADD) and whose
// QueueEvents reads them with XREAD BLOCK: a queue and a worker, `completed` events, a delayed
// job, a retried failure. Runs against the first node of RESPLOCK_NODES; against redis-server
// (no RESPLOCK.CLOCK) the delay is waited out in real time, with the same outcome.
'use strict';
const { execFileSync } = require('child_process');
const { Queue, Worker, QueueEvents } = require('bullmq');
const IORedis = require('ioredis');

const [host, portText] = process.env.RESPLOCK_NODES.split(',')[0].split(':');
const connection = { host, port: Number(portText), maxRetriesPerRequest: null };
const results = { passed: 0, failed: 0 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const check = (cond, what) => {
  if (!cond) throw new Error(what);
};

// The test clock: BullMQ stamps jobs with the client's Date.now() and waits for delayed jobs
// with a blocking command timed on the server. Moving time moves both, as a test clock for the
// application and its Redis would.
const realNow = Date.now;
let offset = 0;
Date.now = () => realNow() + offset;
const cli = (...args) =>
  execFileSync('redis-cli', ['-h', host, '-p', portText, ...args], { encoding: 'utf8' }).trim();
const serverClock = !/unknown command/i.test(cli('RESPLOCK.CLOCK', 'GET'));
async function moveClock(ms) {
  if (serverClock) {
    offset += ms;
    cli('RESPLOCK.CLOCK', 'ADVANCE', String(ms));
  } else {
    await sleep(ms);
  }
}

async function eventually(cond, what, limit = 10000) {
  const end = realNow() + limit;
  while (!(await cond())) {
    if (realNow() > end) throw new Error(what);
    await sleep(20);
  }
}

async function step(name, fn) {
  const admin = new IORedis(connection);
  await admin.flushall();
  await admin.quit();
  const started = realNow();
  try {
    await fn();
    results.passed++;
    console.log(`ok   bullmq.js: ${name} (${((realNow() - started) / 1000).toFixed(2)}s)`);
  } catch (e) {
    results.failed++;
    console.log(`FAIL bullmq.js: ${name}\n${e.stack}`);
  }
}

// Everything a step opened, closed at its end even when it failed.
async function withQueue(fn) {
  const open = [];
  const track = (x) => (open.push(x), x);
  try {
    await fn(track);
  } finally {
    for (const x of open.reverse()) await x.close().catch(() => {});
  }
}

const steps = [
  ['a worker processes the queued jobs and their results are stored', () =>
    withQueue(async (track) => {
      const queue = track(new Queue('jobs', { connection }));
      const done = [];
      const worker = track(
        new Worker('jobs', async (job) => job.data.x * 2, { connection, concurrency: 2 }),
      );
      worker.on('completed', (job) => done.push(job.id));
      const jobs = await queue.addBulk([1, 2, 3, 4, 5].map((x) => ({ name: 'double', data: { x } })));
      await eventually(async () => done.length === 5, 'five jobs completed');
      for (const [i, j] of jobs.entries()) {
        const job = await queue.getJob(j.id);
        check(job.returnvalue === (i + 1) * 2, `job ${j.id} returned ${job.returnvalue}`);
        check((await job.getState()) === 'completed', `job ${j.id} completed`);
      }
      const counts = await queue.getJobCounts('completed', 'waiting', 'active');
      check(counts.completed === 5 && counts.waiting === 0 && counts.active === 0, JSON.stringify(counts));
    })],
  ['queue events receive completed through a blocking stream read', () =>
    withQueue(async (track) => {
      const queue = track(new Queue('events', { connection }));
      const events = track(new QueueEvents('events', { connection }));
      await events.waitUntilReady();
      const completed = new Promise((resolve) => events.on('completed', resolve));
      // The reader is blocked in XREAD before anything is added.
      await sleep(200);
      const admin = new IORedis(connection);
      const blocked = await admin.client('LIST');
      await admin.quit();
      check(/cmd=xread /.test(blocked), 'QueueEvents is blocked in XREAD');
      track(new Worker('events', async (job) => `hello ${job.data.name}`, { connection }));
      const job = await queue.add('greet', { name: 'resplock' });
      const ev = await Promise.race([completed, sleep(10000).then(() => null)]);
      check(ev !== null, 'a completed event within 10 s');
      check(ev.jobId === job.id, `event for job ${job.id}: ${JSON.stringify(ev)}`);
      check(ev.returnvalue === 'hello resplock', `return value ${ev.returnvalue}`);
      const admin2 = new IORedis(connection);
      const len = await admin2.xlen(queue.keys.events);
      await admin2.quit();
      check(len >= 3, `the events stream holds the job's events (${len})`);
    })],
  ['a delayed job waits until the clock reaches its time', () =>
    withQueue(async (track) => {
      const queue = track(new Queue('later', { connection }));
      const done = [];
      const worker = track(new Worker('later', async (job) => job.data.n, { connection }));
      worker.on('completed', (job) => done.push(realNow()));
      await worker.waitUntilReady();
      const job = await queue.add('tick', { n: 1 }, { delay: 3000 });
      await sleep(500);
      check((await job.getState()) === 'delayed', 'delayed before its time');
      check(done.length === 0, 'not processed before its time');
      await moveClock(3000);
      await eventually(async () => done.length === 1, 'processed once its time came', 5000);
      check((await queue.getJob(job.id)).returnvalue === 1, 'its result');
    })],
  ['a failing job is retried and a job out of attempts ends failed', () =>
    withQueue(async (track) => {
      const queue = track(new Queue('flaky', { connection }));
      const tries = {};
      const worker = track(
        new Worker(
          'flaky',
          async (job) => {
            tries[job.id] = (tries[job.id] || 0) + 1;
            if (job.data.failTimes >= tries[job.id]) throw new Error(`attempt ${tries[job.id]} failed`);
            return 'finally';
          },
          { connection },
        ),
      );
      const failed = [];
      worker.on('failed', (job, err) => failed.push([job.id, err.message]));
      const opts = { attempts: 3, backoff: { type: 'fixed', delay: 100 } };
      const ok = await queue.add('retry', { failTimes: 2 }, opts);
      const bad = await queue.add('doomed', { failTimes: 5 }, opts);
      await eventually(
        async () =>
          (await ok.getState()) === 'completed' && (await queue.getJob(bad.id).then((j) => j.getState())) === 'failed',
        'one completed after retries, one failed for good',
      );
      const okJob = await queue.getJob(ok.id);
      check(okJob.returnvalue === 'finally' && okJob.attemptsMade === 3, `retried job: ${okJob.attemptsMade} attempts`);
      const badJob = await queue.getJob(bad.id);
      check(badJob.attemptsMade === 3, `failed job: ${badJob.attemptsMade} attempts`);
      check(badJob.failedReason === 'attempt 3 failed', `failed reason: ${badJob.failedReason}`);
      check((await queue.getFailed()).map((j) => j.id).join() === bad.id, 'in the failed set');
      check(tries[ok.id] === 3 && tries[bad.id] === 3, JSON.stringify(tries));
    })],
];

(async () => {
  for (const [name, fn] of steps) await step(name, fn);
  console.log(`bullmq.js: ${results.passed} passed, ${results.failed} failed`);
  process.exit(results.failed ? 1 : 0);
})();
