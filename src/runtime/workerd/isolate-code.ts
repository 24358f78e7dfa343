/**
 * What the host worker of an account's process loads as one script's isolate (inside/isolate-host.ts
 * asks the server's code service for it by the isolate's loader name): the script's modules as
 * uploaded (or its bundle), its compatibility date and flags (edgeport's own left out), its vars
 * and secrets, and edgeport's entry and prelude in front of it (entry-module.ts) with the marks of
 * the process and of the isolate.
 */
import { listHonorsInclude } from '../../store/binding/index.ts';
import { EDGEPORT_FLAGS } from '../compat.ts';
import type { ScriptConfig } from '../script-config.ts';
import { entryModuleSource, preludeSource, type EntryMarks, type InternalModuleNames } from './entry-module.ts';
import type { IsolateCode } from './inside/isolate-host.ts';
import type { ConsoleMarks } from './output-router.ts';
import type { WorkerdModule } from './workerd-config.ts';

/** The source of a script as the host runs it: its modules, the main one, and its text and JSON bindings (vars and secrets). */
export interface ScriptSource {
  mainModule: string;
  modules: ReadonlyArray<{ name: string; kind: WorkerdModule['kind']; content: Uint8Array }>;
  vars: ReadonlyArray<{ name: string; kind: 'text' | 'json'; value: string }>;
}

export interface IsolateCodeInput {
  isolate: string;
  script: ScriptConfig;
  source: ScriptSource;
  names: InternalModuleNames;
  marks: EntryMarks;
  console: ConsoleMarks;
  /** The key of `env` the host puts its gates under. */
  internalKey: string;
  outbound: number;
  cacheNamespace: string;
  tailed: boolean;
  /** The isolate's token at the store service (when it binds buckets). */
  storeToken: string;
}

const KINDS: Record<WorkerdModule['kind'], IsolateCode['modules'][number]['kind']> = {
  esModule: 'js',
  commonJsModule: 'cjs',
  text: 'text',
  data: 'data',
  wasm: 'wasm',
  json: 'json',
};

export function isolateCode(input: IsolateCodeInput): IsolateCode {
  const { script, source, names } = input;
  const honorsInclude = listHonorsInclude(script.compatibilityDate, script.compatibilityFlags);
  const modules: IsolateCode['modules'] = source.modules.map((module) => ({
    name: module.name,
    kind: KINDS[module.kind],
    content: module.kind === 'data' || module.kind === 'wasm' ? Buffer.from(module.content).toString('base64') : Buffer.from(module.content).toString('utf8'),
  }));
  modules.push(
    { name: names.entry, kind: 'js', content: entryModuleSource(source.mainModule, names, input.marks) },
    {
      name: names.prelude,
      kind: 'js',
      content: preludeSource({
        names,
        internalKey: input.internalKey,
        consoleMarks: { line: input.console.line, lines: input.console.lines, end: input.console.end },
        buckets: script.storeBuckets.map(({ binding, bucketName }) => ({ binding, bucket: bucketName, listHonorsInclude: honorsInclude })),
      }),
    },
  );
  const internalModules: IsolateCode['internalModules'] = [
    { name: names.cacheApi, source: 'cacheApi' },
    { name: names.consoleMarks, source: 'consoleMarks' },
  ];
  if (script.storeBuckets.length > 0) internalModules.push({ name: names.storeBinding, source: 'storeBinding' });
  return {
    isolate: input.isolate,
    compatibilityDate: script.compatibilityDate,
    compatibilityFlags: script.compatibilityFlags.filter((flag) => !EDGEPORT_FLAGS.has(flag)),
    mainModule: names.entry,
    modules,
    internalModules,
    vars: [...source.vars],
    internalKey: input.internalKey,
    storeToken: script.storeBuckets.length > 0 ? input.storeToken : null,
    outbound: input.outbound,
    cacheNamespace: input.cacheNamespace,
    tail: input.tailed ? { line: input.console.line, lines: input.console.lines, end: input.console.end } : null,
  };
}
