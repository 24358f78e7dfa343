/**
 * Preloaded (`node --import`) into every process a test starts through child-processes.ts. The
 * test process holds the only other end of a pipe on this process's fd named by
 * `TEST_PARENT_PIPE=<fd>:<test process pid>`; when that pipe reads end-of-file the test process
 * is gone (it returned, crashed, or the test runner SIGTERMed or SIGKILLed it), and this process
 * stops itself: SIGTERM, as a user's Ctrl-C would (edgeport shuts down cleanly), then SIGKILL if
 * it is still there 5 s later. Plain JavaScript: it runs before `edgeport` registers tsx.
 */
import { Socket } from 'node:net';
import { isMainThread } from 'node:worker_threads';

const [fd, parent] = (process.env.TEST_PARENT_PIPE ?? '').split(':').map(Number);
// Only the test process's own child watches: a process that inherited the variable (the test
// runner forwards `--import` and the environment to the files it runs) has no such pipe.
if (isMainThread && process.ppid === parent && fd > 2) {
  delete process.env.TEST_PARENT_PIPE;
  const pipe = new Socket({ fd, readable: true, writable: false });
  let gone = false;
  const parentGone = () => {
    if (gone) return;
    gone = true;
    setTimeout(() => process.kill(process.pid, 'SIGKILL'), 5_000).unref();
    process.kill(process.pid, 'SIGTERM');
  };
  pipe.on('end', parentGone);
  pipe.on('close', parentGone);
  pipe.on('error', parentGone);
  pipe.resume();
  // Watching never keeps this process alive on its own.
  pipe.unref();
}
