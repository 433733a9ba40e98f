'use strict';
// Starts the resplock binary on a free loopback port for a test, waits until it answers, and
// hands back connection options for ioredis and node-redis plus the test controls
// (RESPLOCK.CLOCK / FAULT / SNAPSHOT / RESTART) over a connection of its own.
//
// The binary: options.bin, else $RESPLOCK_BIN, else `resplock` on PATH (cargo install, or the
// Python wheel, put it there).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function encode(args) {
  let out = `*${args.length}\r\n`;
  for (const a of args) {
    const b = Buffer.from(String(a));
    out += `$${b.length}\r\n${b.toString('latin1')}\r\n`;
  }
  return Buffer.from(out, 'latin1');
}

// Parses one RESP2 reply from buf at pos; returns [value, next] or null if incomplete.
function parse(buf, pos) {
  const end = buf.indexOf('\r\n', pos);
  if (end < 0) return null;
  const kind = String.fromCharCode(buf[pos]);
  const line = buf.toString('utf8', pos + 1, end);
  const next = end + 2;
  switch (kind) {
    case '+': return [line, next];
    case '-': { const e = new Error(line); e.redisError = true; return [e, next]; }
    case ':': return [Number(line), next];
    case '$': {
      const n = Number(line);
      if (n < 0) return [null, next];
      if (buf.length < next + n + 2) return null;
      return [buf.toString('utf8', next, next + n), next + n + 2];
    }
    case '*': {
      const n = Number(line);
      if (n < 0) return [null, next];
      const items = [];
      let p = next;
      for (let i = 0; i < n; i++) {
        const r = parse(buf, p);
        if (!r) return null;
        items.push(r[0]);
        p = r[1];
      }
      return [items, p];
    }
    default: throw new Error(`resplock: unexpected reply ${JSON.stringify(line)}`);
  }
}

// One command on a fresh connection: it sends no handshake a fault could hit, and a server
// that closed its connections (RESTART, DISCONNECT) is simply reached again.
function rawCommand(host, port, args) {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection({ host, port });
    let buf = Buffer.alloc(0);
    sock.on('connect', () => sock.write(encode(args)));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      const r = parse(buf, 0);
      if (r) {
        sock.destroy();
        if (r[0] instanceof Error) reject(r[0]); else resolve(r[0]);
      }
    });
    sock.on('error', reject);
    sock.on('close', () => reject(new Error('resplock: connection closed before a reply')));
  });
}

async function waitReady(host, port, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return false;
    try {
      const r = await rawCommand(host, port, ['PING']);
      if (r === 'PONG') return true;
    } catch (e) {
      if (e.redisError && /^NOAUTH/.test(e.message)) return true;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

/**
 * Start a server. options: { bin, args: [...more redis-server options], timeoutMs }.
 * Resolves to { host, port, url, unixSocket, ioredis, nodeRedis, command, clock, fault,
 * clearFaults, snapshot, restart, stop, log }.
 */
async function startServer(options = {}) {
  const bin = options.bin || process.env.RESPLOCK_BIN || 'resplock';
  const host = '127.0.0.1';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resplock-'));
  const unixSocket = path.join(dir, 'resplock.sock');
  let last = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const logPath = path.join(dir, 'server.log');
    const logFd = fs.openSync(logPath, 'w');
    const argv = ['--port', String(port), '--bind', host, '--unixsocket', unixSocket,
      '--unixsocketperm', '700', '--save', '', '--appendonly', 'no', '--dir', dir,
      '--enable-test-commands', 'yes', ...(options.args || [])];
    const child = spawn(bin, argv, { stdio: ['ignore', logFd, logFd] });
    fs.closeSync(logFd);
    const spawnError = new Promise((resolve) => child.on('error', resolve));
    const ready = await Promise.race([
      waitReady(host, port, child, options.timeoutMs || 10000),
      spawnError.then((e) => { throw new Error(`resplock: cannot run ${bin}: ${e.message}`); }),
    ]);
    if (ready) {
      const command = (...args) => rawCommand(host, port, args);
      const server = {
        host,
        port,
        url: `redis://${host}:${port}`,
        unixSocket,
        /** Options for `new Redis(options)` (ioredis). */
        ioredis: { host, port },
        /** Options for `createClient(options)` (node-redis). */
        nodeRedis: { url: `redis://${host}:${port}` },
        command,
        clock: {
          get: () => command('RESPLOCK.CLOCK', 'GET'),
          advance: (ms) => command('RESPLOCK.CLOCK', 'ADVANCE', ms),
          set: (unixMs) => command('RESPLOCK.CLOCK', 'SET', unixMs),
          freeze: () => command('RESPLOCK.CLOCK', 'FREEZE'),
          resume: () => command('RESPLOCK.CLOCK', 'RESUME'),
          reset: () => command('RESPLOCK.CLOCK', 'RESET'),
        },
        /** fault('ERROR', 'READONLY no', { command: 'set', count: 1 }) -> rule id */
        fault: (kind, ...rest) => {
          const opts = rest.length && typeof rest[rest.length - 1] === 'object' ? rest.pop() : {};
          const argv = ['RESPLOCK.FAULT', kind, ...rest];
          if (opts.command !== undefined) argv.push('COMMAND', opts.command);
          if (opts.match !== undefined) argv.push('MATCH', opts.match);
          if (opts.client !== undefined) argv.push('CLIENT', opts.client);
          if (opts.count !== undefined) argv.push('COUNT', opts.count);
          return command(...argv);
        },
        clearFaults: (id) => command('RESPLOCK.FAULT', 'CLEAR', ...(id === undefined ? [] : [id])),
        snapshot: (name) => command('RESPLOCK.SNAPSHOT', ...(name ? [name] : [])),
        /** restart('empty' (the default, as RESPLOCK.RESTART) | 'keep') or restart({ from: name }) */
        restart: (mode = 'empty') => (typeof mode === 'object'
          ? command('RESPLOCK.RESTART', 'FROM', mode.from)
          : command('RESPLOCK.RESTART', mode.toUpperCase())),
        log: () => fs.readFileSync(logPath, 'utf8'),
        stop: () => new Promise((resolve) => {
          const done = () => { fs.rmSync(dir, { recursive: true, force: true }); resolve(); };
          if (child.exitCode !== null) return done();
          child.once('exit', done);
          child.kill('SIGTERM');
        }),
      };
      return server;
    }
    last = fs.readFileSync(logPath, 'utf8');
    child.kill('SIGKILL');
  }
  fs.rmSync(dir, { recursive: true, force: true });
  throw new Error(`resplock: ${bin} did not start:\n${last}`);
}

module.exports = { startServer };
