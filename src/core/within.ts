/**
 * A promise given a deadline: `promise`'s value, or `fallback` if it has not settled within `ms`.
 * The timer is cleared as soon as the race is decided, so a promise that settles early leaves no
 * timer behind to hold the process open (a test file's process waited out such timers).
 */
export async function within<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<F>((resolve) => {
        timer = setTimeout(resolve, ms, fallback);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
