// The official MCP TypeScript SDK as a client of `tgp serve`, over stdio or
// streamable HTTP (test/integration/mcpclient_ts_test.go runs it):
//
//   1. every tool has a title; every tool that declares an outputSchema is
//      called (a script of calls below) and its structuredContent is
//      validated against the schema by the SDK itself (Client.callTool
//      refuses a result that does not match); a tool the script forgot to
//      call fails the run. Each (schema, structuredContent) pair is also
//      printed on a "STRUCTURED " line for the Go test to validate with
//      another validator (jsonschema-go); then every such tool is made
//      to fail, and its error must reach the client as an isError result
//      whose text names the error's kind;
//   2. resources: tgp://meta.json and tgp://tools/{path} are listed and
//      read; when another OS process (`tgp call`) pushes a tool to the
//      shared remote, the server's refresh brings it in and the client
//      receives notifications/resources/list_changed, then lists and reads
//      the new tool.
//
// Usage: node check.mjs stdio|http   (TGP_BIN, TGP_REMOTE, TGP_WORK set)
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const mode = process.argv[2];
const { TGP_BIN: bin, TGP_REMOTE: remote, TGP_WORK: work } = process.env;
if (!['stdio', 'http'].includes(mode) || !bin || !remote || !work) {
  console.error('usage: TGP_BIN=... TGP_REMOTE=... TGP_WORK=... node check.mjs stdio|http');
  process.exit(2);
}
const env = {
  HOME: process.env.HOME ?? work, PATH: process.env.PATH,
  TGP_GIT_REMOTE: remote, TGP_GIT_AUTHOR_NAME: 'TS client', TGP_GIT_AUTHOR_EMAIL: 'ts@agents.example',
  TGP_GIT_REFRESH_INTERVAL: '0', TGP_SQL_DRIVER: 'sqlite', TGP_SQL_DSN: join(work, `${mode}.sqlite`),
};

let passed = 0;
let failed = 0;
function check(ok, what, detail) {
  if (ok) {
    passed++;
    console.log(`ok   ${what}`);
  } else {
    failed++;
    console.log(`FAIL ${what}${detail === undefined ? '' : ': ' + (typeof detail === 'string' ? detail : JSON.stringify(detail))}`);
  }
}

function withTimeout(p, ms, what) {
  return Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error(`${what}: no answer in ${ms} ms`)), ms))]);
}

// connect starts `tgp serve` (stdio: as the transport's child; http: on a
// free loopback port, read from its "serving MCP on" line).
async function connect() {
  const root = mkdtempSync(join(work, `${mode}-root-`));
  const client = new Client({ name: 'tgp-ts-check', version: '1.0.0' });
  if (mode === 'stdio') {
    const transport = new StdioClientTransport({ command: bin, args: ['serve', '--root', root], env, stderr: 'inherit' });
    await client.connect(transport);
    return { client, stop: async () => client.close() };
  }
  const child = spawn(bin, ['serve', '--http', '127.0.0.1:0', '--root', root], { env, stdio: ['ignore', 'inherit', 'pipe'] });
  const url = await withTimeout(new Promise((resolve, reject) => {
    let buf = '';
    child.stderr.on('data', (d) => {
      process.stderr.write(d);
      buf += d;
      const m = buf.match(/serving MCP on (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`tgp serve exited (${code}) before listening`)));
  }), 120000, 'tgp serve --http');
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return {
    client,
    stop: async () => {
      await client.close();
      child.kill('SIGINT');
    },
  };
}

// otherProcessPushes is another agent: `tgp call write_file` in its own
// root, pushing to the same remote.
function otherProcessPushes(path, content) {
  const root = mkdtempSync(join(work, `${mode}-other-`));
  return new Promise((resolve, reject) => {
    execFile(bin, ['call', 'write_file', JSON.stringify({ path, content }), '--root', root], { env }, (err, stdout, stderr) => {
      if (err || !stdout.includes('"ok":true')) reject(new Error(`tgp call write_file: ${err}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

const tool = 'tools/ts/double.ts';
const sessionArgs = {}; // filled by exec_command's answer
const calls = [
  ['write_file', { path: tool, content: '/** Doubles a number. */\nexport default (a: { n: number }): number => a.n * 2;\n' }],
  ['read_file', { path: tool }],
  ['list_files', { dir: 'tools' }],
  ['patch_file', { path: tool, old_string: 'a.n * 2', new_string: '2 * a.n' }],
  ['tool_history', { path: tool }],
  ['revert_tool', { path: tool, to: 'HEAD~1' }],
  ['apply_patch', { patch: '*** Begin Patch\n*** Add File: notes/a.txt\n+hello\n*** End Patch' }],
  ['delete_file', { path: 'notes/a.txt' }],
  ['find_tools', { query: 'doubles a number' }],
  ['check_tool', { path: tool }],
  ['exec_tool', { path: tool, args: { n: 21 } }],
  ['exec_sql', { sql: 'CREATE TABLE t (x INTEGER)' }],
  ['exec_sql', { sql: 'INSERT INTO t (x) VALUES (?)', params: [42] }],
  ['exec_sql', { sql: 'SELECT x FROM t' }],
  ['shell', { command: 'echo hi' }],
  ['exec_command', { cmd: 'cat', yield_time_ms: 0 }],
  ['write_stdin', sessionArgs],
  ['git_status', {}],
];

// failing is one call per tool that declares an outputSchema, each made
// to fail, with the error kind the model must read. The SDK throws on
// structuredContent that does not match the schema even when isError is
// set, so an error result must be readable as text alone.
const failing = [
  ['read_file', { path: '../../etc/passwd' }, 'sandbox_violation'],
  ['write_file', { path: '../outside.txt', content: 'x' }, 'sandbox_violation'],
  ['list_files', { dir: '../..' }, 'sandbox_violation'],
  ['patch_file', { path: tool, old_string: 'not in the file', new_string: 'x' }, 'not_found'],
  ['apply_patch', { patch: 'not a patch' }, 'bad_args'],
  ['delete_file', { path: 'notes/never-written.txt' }, 'not_found'],
  ['find_tools', { query: 7 }, 'bad_args'],
  ['check_tool', { path: 'tools/missing.ts' }, 'not_found'],
  ['exec_tool', { path: tool, args: { n: 'x' }, timeout_ms: 1 }, 'bad_args'],
  ['exec_sql', { sql: 'SELECT * FROM no_such_table' }, 'execution_failed'],
  ['shell', { command: 5 }, 'bad_args'],
  ['exec_command', { cmd: 'cat', bogus: true }, 'bad_args'],
  ['write_stdin', { session_id: 987654, chars: 'x' }, 'not_found'],
  ['git_status', { bogus: 1 }, 'bad_args'],
  ['tool_history', { path: '../outside.ts' }, 'sandbox_violation'],
  ['revert_tool', { path: tool, to: 'no-such-ref' }, 'not_found'],
];

async function callsFail(client, declared) {
  const failed = new Set();
  for (const [name, args, kind] of failing) {
    let res;
    try {
      res = await client.callTool({ name, arguments: args });
    } catch (err) {
      check(false, `${mode}: failing ${name} is readable by the SDK`, String(err));
      continue;
    }
    let body;
    try {
      body = JSON.parse(res.content?.[0]?.text ?? '');
    } catch {
      body = undefined;
    }
    check(res.isError === true && body?.ok === false && body?.error?.kind === kind && typeof body?.error?.message === 'string',
      `${mode}: failing ${name} ${JSON.stringify(args).slice(0, 50)} reads as ${kind}`, res.content?.[0]?.text);
    failed.add(name);
  }
  const missed = [...declared.keys()].filter((n) => !failed.has(n));
  check(missed.length === 0, `${mode}: every tool with an outputSchema was made to fail and read`, missed);
}

async function run() {
  const { client, stop } = await connect();
  let listChanged = 0;
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => { listChanged++; });
  try {
    const { tools } = await client.listTools();
    check(tools.length > 20, `${mode}: tools/list has the kernel's tools`, tools.length);
    const untitled = tools.filter((t) => !t.title).map((t) => t.name);
    check(untitled.length === 0, `${mode}: every tool has a title`, untitled);
    const declared = new Map(tools.filter((t) => t.outputSchema).map((t) => [t.name, t.outputSchema]));
    check(declared.size >= 14, `${mode}: tools with an outputSchema`, [...declared.keys()]);
    const called = new Set();
    for (const [name, args] of calls) {
      // callTool validates structuredContent against the outputSchema the
      // client cached from tools/list, and throws if it does not match.
      const res = await client.callTool({ name, arguments: args });
      check(!res.isError, `${mode}: ${name} ${JSON.stringify(args).slice(0, 60)}`, res.content?.[0]?.text);
      if (name === 'exec_command') {
        Object.assign(sessionArgs, { session_id: res.structuredContent.result.session_id, chars: 'x\n', close: true, yield_time_ms: 5000 });
      }
      if (name === 'git_status') {
        check(Array.isArray(res.structuredContent.entries) && res.structuredContent.branch === 'main',
          `${mode}: git_status keeps its text and adds entries and branch`, res.structuredContent);
        check(typeof res.structuredContent.result === 'string' && res.content[0].text.startsWith('## main'),
          `${mode}: git_status text is git's`, res.content[0].text);
      }
      if (declared.has(name)) {
        // Reaching here means the SDK validated it (callTool throws otherwise).
        check(res.structuredContent !== undefined, `${mode}: ${name} structuredContent matches its outputSchema (SDK)`);
        console.log('STRUCTURED ' + JSON.stringify({ tool: name, schema: declared.get(name), structured: res.structuredContent }));
        called.add(name);
      }
    }
    const missed = [...declared.keys()].filter((n) => !called.has(n));
    check(missed.length === 0, `${mode}: every tool with an outputSchema was called and validated`, missed);
    await callsFail(client, declared);

    // Resources.
    let { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    check(uris.includes('tgp://meta.json') && uris.includes(`tgp://${tool}`), `${mode}: resources list meta.json and the forged tool`, uris);
    const meta = await client.readResource({ uri: 'tgp://meta.json' });
    check(JSON.parse(meta.contents[0].text).tools[tool]?.description === 'Doubles a number.', `${mode}: meta.json resource is the registry`, meta.contents[0].text);
    const src = await client.readResource({ uri: `tgp://${tool}` });
    // revert_tool brought back write_file's version (a.n * 2).
    check(src.contents[0].text.includes('a.n * 2'), `${mode}: tool resource is its source`, src.contents[0].text);
    const { resourceTemplates } = await client.listResourceTemplates();
    check(resourceTemplates.some((t) => t.uriTemplate === 'tgp://tools/{+path}'), `${mode}: tool resource template`, resourceTemplates);

    // Another process pushes a tool; a refresh brings it in and the
    // server tells the client.
    await new Promise((r) => setTimeout(r, 300)); // our own writes' notifications are out
    listChanged = 0;
    const pushed = `tools/other/${mode}-pushed.ts`;
    await otherProcessPushes(pushed, '/** Triples a number. */\nexport default (a: { n: number }): number => a.n + a.n + a.n;\n');
    const deadline = Date.now() + 60000;
    while (listChanged === 0 && Date.now() < deadline) {
      await client.callTool({ name: 'find_tools', arguments: { query: 'triples' } }); // a read: the server checks the remote
      await new Promise((r) => setTimeout(r, 200));
    }
    check(listChanged > 0, `${mode}: notifications/resources/list_changed after another process pushed`);
    ({ resources } = await client.listResources());
    check(resources.some((r) => r.uri === `tgp://${pushed}` && r.title === `${mode}-pushed`), `${mode}: the pushed tool is a resource`, resources.map((r) => [r.uri, r.title]));
    const other = await client.readResource({ uri: `tgp://${pushed}` });
    check(other.contents[0].text.includes('a.n + a.n + a.n'), `${mode}: the pushed tool reads`, other.contents[0].text);
    let refused = false;
    try {
      await client.readResource({ uri: 'tgp://tgp.config.yaml' });
    } catch {
      refused = true;
    }
    check(refused, `${mode}: a file outside the toolbox is not a resource`);
  } finally {
    await stop();
  }
}

try {
  await run();
} catch (err) {
  check(false, `${mode}: ${err.stack ?? err}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
