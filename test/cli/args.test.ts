/**
 * The command line: routing to a command, help and version, option parsing (properties over
 * every command's options), "did you mean" for typos, the usage text, and how failures print.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  parseAccountsArgs,
  parseBackupArgs,
  parseCommand,
  parseDevArgs,
  parseSecretsArgs,
  parseStartArgs,
  route,
  UsageError,
  wantsHelp,
} from '../../src/cli/args.ts';
import { CliError } from '../../src/cli/cli-errors.ts';
import { COMMANDS, optionHint, type CommandSpec } from '../../src/cli/commands.ts';
import { closest, editDistance } from '../../src/cli/did-you-mean.ts';
import { describeFailure } from '../../src/cli/failure.ts';
import { commandHelp, groupHelp, USAGE } from '../../src/cli/usage.ts';
import { VERSION } from '../../src/cli/version.ts';
import { ConfigError } from '../../src/config/load.ts';

/** The UsageError `run` throws. */
function usageError(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof UsageError, `a UsageError, not ${String(error)}`);
    return error;
  }
  assert.fail('no error');
}

test('edit distance: a swap of neighbours, an insertion, a deletion or a substitution is one step', { timeout: 10_000 }, () => {
  assert.equal(editDistance('data-dri', 'data-dir'), 1);
  assert.equal(editDistance('strat', 'start'), 1);
  assert.equal(editDistance('', 'abc'), 3);
  assert.equal(closest('--Data-Dir', ['--config', '--data-dir']), '--data-dir', 'case is ignored');
  assert.equal(closest('--gate', ['--gateway-port', '--s3-port']), '--gateway-port', 'the one name it begins');
  assert.equal(closest('--', ['--edge-port', '--api-port']), undefined, 'several begin with it: no guess');
  assert.equal(closest('zzzzzz', ['start', 'dev']), undefined);
  const word = fc.string({ minLength: 2, maxLength: 12 });
  fc.assert(
    fc.property(word, word, (a, b) => {
      const d = editDistance(a, b);
      assert.equal(d, editDistance(b, a));
      assert.ok(d >= Math.abs(a.length - b.length) && d <= Math.max(a.length, b.length));
      assert.equal(editDistance(a, a), 0);
    }),
  );
  fc.assert(
    fc.property(word, fc.nat(), fc.string({ minLength: 1, maxLength: 1 }), (a, at, c) => {
      const i = at % a.length;
      if (i + 1 < a.length && a[i] !== a[i + 1]) assert.equal(editDistance(a, a.slice(0, i) + a[i + 1] + a[i] + a.slice(i + 2)), 1, 'swap');
      assert.equal(editDistance(a, a.slice(0, i) + a.slice(i + 1)), 1, 'deletion');
      assert.equal(editDistance(a, a.slice(0, i) + c + a.slice(i)), 1, 'insertion');
      if (a[i] !== c) assert.equal(editDistance(a, a.slice(0, i) + c + a.slice(i + 1)), 1, 'substitution');
    }),
  );
});

test('any one-character slip in any option of any command gets a suggestion at most as far as the option meant', { timeout: 20_000 }, () => {
  const options = Object.values(COMMANDS).flatMap((spec) => spec.options.map((option) => ({ spec, name: `--${option.name}` })));
  const slip = fc.record({
    kind: fc.constantFrom('swap', 'delete', 'insert', 'substitute'),
    at: fc.nat(),
    c: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz-'),
  });
  fc.assert(
    fc.property(fc.constantFrom(...options), slip, ({ spec, name }, { kind, at, c }) => {
      const i = 2 + (at % (name.length - 2));
      const typo =
        kind === 'swap'
          ? name.slice(0, i - 1) + name[i] + name[i - 1] + name.slice(i + 1)
          : kind === 'delete'
            ? name.slice(0, i) + name.slice(i + 1)
            : kind === 'insert'
              ? name.slice(0, i) + c + name.slice(i)
              : name.slice(0, i) + c + name.slice(i + 1);
      if (spec.options.some((option) => `--${option.name}` === typo) || typo === name) return;
      const error = usageError(() => parseCommand(spec, [typo, 'x']));
      const suggested = /^Unknown option '(.*)'\. Did you mean (--[a-z0-9-]+)\?$/.exec(error.message);
      assert.ok(suggested, `a suggestion for ${typo}: ${error.message}`);
      assert.equal(suggested[1], typo);
      assert.ok(editDistance(typo, suggested[2]!) <= editDistance(typo, name), `${typo}: ${suggested[2]} is no further than ${name}`);
      assert.equal(error.usage, commandHelp(spec.name), "followed by the command's help");
    }),
    { numRuns: 300 },
  );
});

test('known mistakes get these exact messages', { timeout: 5_000 }, () => {
  const start = (args: string[]) => usageError(() => parseStartArgs(args)).message;
  assert.equal(start(['--data-dri', 'x']), "Unknown option '--data-dri'. Did you mean --data-dir?");
  assert.equal(start(['--gateway', '1']), "Unknown option '--gateway'. Did you mean --gateway-port?");
  assert.equal(start(['--port', '1']), "Unknown option '--port'.", 'no guess when nothing is close');
  assert.equal(start(['-p', '1']), "Unknown option '-p'.");
  assert.equal(start(['--api-port']), 'Option --api-port needs a value: --api-port N.');
  assert.equal(start(['--api-port', '--s3-port', '1']), 'Option --api-port needs a value: --api-port N.');
  assert.equal(start(['--data-dir=']), 'Option --data-dir needs a value: --data-dir DIR.');
  assert.equal(start(['--api-port', '1', '--api-port=2']), 'Option --api-port is given twice; give it once.');
  assert.equal(start(['--s3-port', 'abc']), '--s3-port must be a port number from 0 to 65535 (0 picks a free port), got "abc".');
  assert.equal(start(['--s3-port=70000']), '--s3-port must be a port number from 0 to 65535 (0 picks a free port), got "70000".');
  assert.equal(start(['extra']), 'Unexpected argument "extra": edgeport start [options].');
  const dev = (args: string[]) => usageError(() => parseDevArgs(args)).message;
  assert.equal(dev([]), 'edgeport dev needs a script config: edgeport dev <script-config> [options].');
  assert.equal(dev(['a.toml', 'b.toml']), 'Unexpected argument "b.toml": edgeport dev <script-config> [options].');
  assert.equal(dev(['a.toml', '--prot', '1']), "Unknown option '--prot'. Did you mean --port?");
  const accounts = (args: string[]) => usageError(() => parseAccountsArgs(args)).message;
  assert.equal(
    accounts([]),
    'edgeport accounts needs an action: edgeport accounts create, edgeport accounts list, edgeport accounts rotate-key, edgeport accounts delete, edgeport accounts quota.',
  );
  assert.equal(accounts(['rotate-key']), 'edgeport accounts rotate-key needs the e-mail of the account: edgeport accounts rotate-key <email> [options].');
  assert.equal(accounts(['delte', 'a@b.c']), "Unknown action 'delte' of edgeport accounts. Did you mean delete?");
  assert.equal(accounts(['delete', 'a@b.c', '--force=yes']), 'Option --force takes no value: write --force alone.');
  assert.equal(accounts(['list', 'a@b.c']), 'Unexpected argument "a@b.c": edgeport accounts list [options].');
  assert.equal(
    accounts(['quota', 'a@b.c', '--max-object-bytes', '10 GB']),
    '--max-object-bytes must be a number of bytes (such as 1073741824 or 1GiB), 0 for no limit, or default for the server\'s [quotas]; got "10 GB".',
  );
  assert.equal(
    accounts(['quota', 'a@b.c', '--max-objects', '1KiB']),
    '--max-objects must be a whole number of objects, 0 for no limit, or default for the server\'s [quotas]; got "1KiB".',
  );
  assert.deepEqual(parseAccountsArgs(['quota', 'a@b.c', '--max-object-bytes=10GiB', '--max-objects', '0', '--max-script-bytes', 'default']).quotas, {
    maxObjectBytes: 10 * 1024 ** 3,
    maxObjects: 0,
    maxScriptBytes: null,
  });
  assert.deepEqual(parseAccountsArgs(['quota', 'a@b.c']).quotas, {});
  const backup = (args: string[]) => usageError(() => parseBackupArgs('backup', args)).message;
  assert.equal(backup([]), 'edgeport backup needs an empty or new directory for the backup: edgeport backup <dir> [options].');
  assert.equal(backup(['b', '--force']), "Unknown option '--force'.", 'only restore replaces data');
  assert.equal(parseBackupArgs('backup', ['b', '--include-secrets-key']).includeSecretsKey, true);
  assert.equal(parseBackupArgs('backup', ['b']).includeSecretsKey, false);
  assert.equal(backup(['b', '--include-secrets-key=yes']), 'Option --include-secrets-key takes no value: write --include-secrets-key alone.');
  const secrets = (args: string[]) => usageError(() => route(['secrets', ...args])).message;
  assert.equal(secrets([]), 'edgeport secrets needs an action: edgeport secrets rotate-key.');
  assert.equal(secrets(['rotate']), "Unknown action 'rotate' of edgeport secrets. Did you mean rotate-key?");
  assert.deepEqual(route(['secrets', 'rotate-key', '--new-key-file', 'k']), { kind: 'run', command: 'secrets rotate-key', args: ['--new-key-file', 'k'] });
  assert.deepEqual(route(['help', 'secrets']), { kind: 'help', group: 'secrets' });
  assert.deepEqual(route(['secrets', '--help']), { kind: 'help', group: 'secrets' });
  assert.deepEqual(parseSecretsArgs(['--new-key-file', 'k', '--data-dir', 'd']), { config: undefined, dataDir: 'd', newKeyFile: 'k' });
  assert.equal(usageError(() => parseSecretsArgs(['extra'])).message, 'Unexpected argument "extra": edgeport secrets rotate-key [options].');
  assert.equal(accounts(['crate', 'a@b.c']), "Unknown action 'crate' of edgeport accounts. Did you mean create?");
  assert.equal(accounts(['create']), 'edgeport accounts create needs the e-mail of the new account: edgeport accounts create <email> [options].');
  const top = (argv: string[]) => usageError(() => route(argv));
  assert.equal(top(['strat']).message, "Unknown command 'strat'. Did you mean start?");
  assert.equal(top(['acounts']).message, "Unknown command 'acounts'. Did you mean accounts?");
  assert.equal(top(['frobnicate']).message, "Unknown command 'frobnicate'.");
  assert.equal(top(['strat']).usage, USAGE);
  assert.equal(top(['--verison']).message, "Unknown option '--verison'. Did you mean --version?");
  assert.equal(
    top(['--data-dir', 'x', 'start']).message,
    "Unknown option '--data-dir' before a command. Options follow the command, as in: edgeport start --data-dir ...",
  );
});

test('options parse in any order and either form, and give back what was given', { timeout: 20_000 }, () => {
  const value = fc.stringMatching(/^[a-zA-Z0-9_./][a-zA-Z0-9_./ -]{0,20}$/);
  const given = (spec: CommandSpec) =>
    fc
      .subarray([...spec.options])
      .chain((options) =>
        fc.tuple(
          fc.constant(options),
          fc.array(value, { minLength: options.length, maxLength: options.length }),
          fc.array(fc.boolean(), { minLength: options.length, maxLength: options.length }),
          fc.nat(),
        ),
      );
  for (const spec of Object.values(COMMANDS)) {
    fc.assert(
      fc.property(
        given(spec),
        fc.array(value, { minLength: spec.positionals.length, maxLength: spec.positionals.length }),
        ([options, values, joined, seed], positionals) => {
          // A switch (--force) stands alone and reads back as 'true'.
          const units = options.map((option, i) =>
            option.value === undefined ? [`--${option.name}`] : joined[i] ? [`--${option.name}=${values[i]}`] : [`--${option.name}`, values[i]!],
          );
          // The positionals between any two options (at a seeded place).
          const at = seed % (units.length + 1);
          const all = [...units.slice(0, at).flat(), ...positionals, ...units.slice(at).flat()];
          const parsed = parseCommand(spec, all);
          assert.deepEqual(parsed.values, Object.fromEntries(options.map((option, i) => [option.name, option.value === undefined ? 'true' : values[i]])));
          assert.deepEqual(parsed.positionals, positionals);
        },
      ),
      { numRuns: 200 },
    );
  }
});

test('after --, everything is positional: a script config may start with a dash', { timeout: 5_000 }, () => {
  assert.deepEqual(parseDevArgs(['--port', '0', '--', '-odd.toml']), { config: '-odd.toml', port: 0, dataDir: './.edgeport-dev' });
  assert.deepEqual(parseDevArgs(['hello.toml']), { config: 'hello.toml', port: 8787, dataDir: './.edgeport-dev' }, 'dev has a data dir of its own');
  assert.deepEqual(parseStartArgs(['--data-dir', '/d', '--api-port=0', '--edge-port', '8080']), {
    config: undefined,
    flags: { data_dir: '/d', ports: { api: 0, edge: 8080 } },
  });
  assert.deepEqual(parseAccountsArgs(['create', 'a@b.c', '--data-dir', 'd']), {
    action: 'create',
    email: 'a@b.c',
    config: undefined,
    dataDir: 'd',
    force: false,
    quotas: {},
  });
  assert.deepEqual(parseAccountsArgs(['delete', '--force', 'a@b.c']), {
    action: 'delete',
    email: 'a@b.c',
    config: undefined,
    dataDir: undefined,
    force: true,
    quotas: {},
  });
  assert.deepEqual(parseAccountsArgs(['list']), { action: 'list', email: '', config: undefined, dataDir: undefined, force: false, quotas: {} });
  assert.deepEqual(parseBackupArgs('restore', ['b', '--force', '--data-dir', 'd']), { dir: 'b', config: undefined, dataDir: 'd', force: true });
});

test('help and version: flags, the help command, and --help after a command (before --)', { timeout: 5_000 }, () => {
  for (const argv of [[], ['-h'], ['--help'], ['help']]) assert.deepEqual(route(argv), { kind: 'help' }, argv.join(' '));
  for (const argv of [['-v'], ['--version']]) assert.deepEqual(route(argv), { kind: 'version' });
  assert.deepEqual(route(['help', 'dev']), { kind: 'help', command: 'dev' });
  assert.deepEqual(route(['help', 'accounts']), { kind: 'help', group: 'accounts' });
  assert.deepEqual(route(['accounts', '--help']), { kind: 'help', group: 'accounts' });
  const accounts = groupHelp('accounts');
  for (const action of ['create <email>', 'list', 'rotate-key <email>', 'delete <email>', 'quota <email>']) {
    assert.ok(accounts.includes(`  accounts ${action}`), `edgeport accounts --help lists accounts ${action}`);
  }
  assert.match(groupHelp('secrets'), /^ {2}secrets rotate-key +Reseal/m);
  assert.deepEqual(route(['accounts', 'create', 'x@y.z']), { kind: 'run', command: 'accounts create', args: ['x@y.z'] });
  assert.deepEqual(route(['accounts', 'rotate-key', 'x@y.z']), { kind: 'run', command: 'accounts rotate-key', args: ['x@y.z'] });
  assert.deepEqual(route(['help', 'accounts', 'delete']), { kind: 'help', command: 'accounts delete' });
  assert.deepEqual(route(['backup', 'b']), { kind: 'run', command: 'backup', args: ['b'] });
  assert.equal(wantsHelp(['--data-dri', 'x', '--help']), true, 'help wins over a typo');
  assert.equal(wantsHelp(['-h']), true);
  assert.equal(wantsHelp(['--', '--help']), false);
  assert.match(VERSION, /^\d+\.\d+\.\d+/);
});

test('the usage lists every command with one line on what it does, and every option with its default', { timeout: 5_000 }, () => {
  for (const line of [
    '  start ',
    '  dev <script-config> ',
    '  backup <dir> ',
    '  restore <dir> ',
    '  accounts create <email> ',
    '  accounts list ',
    '  accounts rotate-key <email>',
    '  accounts delete <email> ',
    '  accounts quota <email> ',
    '  secrets rotate-key ',
    '  help [command] ',
    '  -h, --help ',
    '  -v, --version ',
  ]) {
    assert.ok(USAGE.includes(line), `lists ${line.trim()}`);
  }
  assert.ok(USAGE.startsWith(`edgeport ${VERSION}`));
  for (const spec of Object.values(COMMANDS)) {
    const help = commandHelp(spec.name);
    for (const option of spec.options) {
      const row = new RegExp(
        `--${option.name}${option.value === undefined ? '' : ` ${option.value}`} +${option.summary.replace(/[()+]/g, '\\$&')} \\(default: ${option.default.replace(/[.()]/g, '\\$&')}`,
      );
      assert.match(USAGE, row, `edgeport --help: ${option.name} of ${spec.name}`);
      assert.match(help.replace(/\n +/g, ' '), row, `edgeport ${spec.name} --help: ${option.name}`);
      if (option.env !== undefined) assert.ok(help.replace(/\n +/g, ' ').includes(option.env), `${spec.name} --help names ${option.env}`);
    }
    for (const line of help.split('\n')) assert.ok(line.length <= 100, `${spec.name} --help lines fit 100 columns: ${line}`);
  }
  assert.equal(optionHint('start', 'api-port'), '--api-port N (or [ports] api in edgeport.toml, EDGEPORT_API_PORT)');
  assert.equal(optionHint('dev', 'port'), '--port N');
});

test('failures print one line and exit 1, bad usage adds the help and exits 2, only a bug prints a stack', { timeout: 5_000 }, () => {
  const usage = describeFailure(new UsageError("Unknown option '--x'.", 'HELP'));
  assert.deepEqual(usage, { text: "edgeport: Unknown option '--x'.\n\nHELP", exitCode: 2 });
  assert.deepEqual(describeFailure(new CliError('CLI_PORT_IN_USE', 'Port 1 is taken.')), { text: 'edgeport: Port 1 is taken.', exitCode: 1 });
  assert.deepEqual(describeFailure(new ConfigError('edgeport.toml: bad.')), { text: 'edgeport: edgeport.toml: bad.', exitCode: 1 });
  assert.deepEqual(
    describeFailure(new CliError('CLI_RESTORE_FAILED', 'edgeport restore: copying failed.')),
    { text: 'edgeport restore: copying failed.', exitCode: 1 },
    'a message naming its command is not prefixed twice',
  );
  const errno = Object.assign(new Error("EACCES: permission denied, open '/x'"), { code: 'EACCES', syscall: 'open' });
  assert.deepEqual(describeFailure(errno), { text: "edgeport: EACCES: permission denied, open '/x'", exitCode: 1 });
  const bug = describeFailure(new TypeError('x is undefined'));
  assert.equal(bug.exitCode, 1);
  assert.match(bug.text, /^edgeport: TypeError: x is undefined\n +at /);
});
