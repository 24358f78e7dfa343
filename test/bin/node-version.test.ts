/**
 * `edgeport` on a node older than it supports: bin/node-version.js says, in one line, what it
 * needs, what it found and how to get it, and bin/edgeport.js prints that line and exits 2 before
 * it loads anything else. The supported range is package.json's `engines.node`, word for word.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { nodeVersionProblem, SUPPORTED_NODE } from '../../bin/node-version.js';
import { outputOf, spawnNode } from '../helpers/child-processes.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EDGEPORT = fileURLToPath(new URL('../../bin/edgeport.js', import.meta.url));

/** A preload that makes this node call itself `version` (process.version is configurable). */
const posingAs = (version: string) => `data:text/javascript,Object.defineProperty(process, 'version', { value: ${JSON.stringify(version)} })`;

test('Node 22.13 and later on the 22 line, and 24 and later, are supported; older ones, 23 and nonsense are not', { timeout: 10_000 }, () => {
  for (const version of ['v22.13.0', 'v22.13.1', 'v22.23.3', 'v24.0.0', 'v24.11.1', 'v25.2.0', 'v26.0.0', 'v30.1.2']) {
    assert.equal(nodeVersionProblem(version), null, version);
  }
  for (const version of ['v18.20.8', 'v20.20.2', 'v21.7.3', 'v22.0.0', 'v22.12.0', 'v23.11.1', 'v2.213.0', 'v', '']) {
    const problem = nodeVersionProblem(version);
    assert.ok(problem !== null, `${version} should be refused`);
    assert.ok(!problem.includes('\n'), 'one line');
    assert.match(problem, /^edgeport needs Node\.js 22\.13 or later on the 22 line, or 24 or later; this is Node\.js /);
    assert.ok(problem.includes(`this is Node.js ${version}: `), problem);
    assert.match(problem, /install Node\.js 24/);
  }
  assert.equal(nodeVersionProblem(process.version), null, `the node running the tests (${process.version}) is supported`);
});

test("package.json's engines.node is the range bin/node-version.js checks", { timeout: 10_000 }, () => {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { engines: { node: string } };
  assert.equal(pkg.engines.node, SUPPORTED_NODE);
});

test('edgeport on Node 20 prints the one line and exits 2, running nothing; on this node it runs', { timeout: 30_000 }, async () => {
  const old = await outputOf(spawnNode(['--import', posingAs('v20.20.2'), EDGEPORT, '--version']));
  assert.equal(old.code, 2, old.stderr);
  assert.equal(old.stdout, '');
  assert.equal(old.stderr, `${nodeVersionProblem('v20.20.2')}\n`);

  const current = await outputOf(spawnNode([EDGEPORT, '--version']));
  assert.equal(current.code, 0, current.stderr);
  assert.match(current.stdout, /\d+\.\d+\.\d+/);
});
