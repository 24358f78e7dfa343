/**
 * The temporary file a job's delivery is writing (file:// destinations), noted durably in the job's
 * spool directory before the file is created. A process killed mid-delivery leaves the note behind;
 * the next start removes the file it names (only a batch temporary file, by its name), and the
 * batch in flight is delivered again under its own name.
 */
import { readFileSync, rmSync, unlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { replaceFileDurably } from '../../core/fs/durable-file.ts';
import type { TempFileNotes } from '../destinations/destination.ts';
import { BATCH_TEMP_FILE } from '../destinations/file-destination.ts';

const NOTE_FILE = 'delivering.json';

export class DeliveryNote implements TempFileNotes {
  readonly #path: string;

  /** The note of the job whose spool is `spoolDir`. */
  constructor(spoolDir: string) {
    this.#path = join(spoolDir, NOTE_FILE);
  }

  async note(path: string): Promise<void> {
    await replaceFileDurably(this.#path, JSON.stringify({ temp: path }));
  }

  async clear(): Promise<void> {
    await rm(this.#path, { force: true });
  }

  /**
   * Removes the temporary file an earlier run noted in `spoolDir` (if it is still there), then the
   * note; returns that file's path, or null when none was noted. Runs at start, before any delivery.
   */
  static sweep(spoolDir: string): string | null {
    const path = join(spoolDir, NOTE_FILE);
    let temp: unknown;
    try {
      temp = (JSON.parse(readFileSync(path, 'utf8')) as { temp?: unknown }).temp;
    } catch {
      // No note (or an unreadable one): nothing to remove.
      rmSync(path, { force: true });
      return null;
    }
    // Only a batch's temporary file, whatever the note says.
    const ours = typeof temp === 'string' && isAbsolute(temp) && BATCH_TEMP_FILE.test(temp) ? temp : null;
    if (ours !== null) {
      try {
        unlinkSync(ours);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    rmSync(path, { force: true });
    return ours;
  }
}
