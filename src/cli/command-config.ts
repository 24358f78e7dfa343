/**
 * The config of a command that works on `edgeport start`'s data (accounts, backup, restore): its
 * edgeport.toml (`--config`), with `--data-dir` over what the file and environment say.
 */
import { loadConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';

export function loadCommandConfig(args: { config: string | undefined; dataDir: string | undefined }): Readonly<Config> {
  return loadConfig({ ...(args.config === undefined ? {} : { file: args.config }), flags: args.dataDir === undefined ? {} : { data_dir: args.dataDir } });
}
