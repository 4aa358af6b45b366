/** Waits at most `ms` for `promise`; true when it resolved in time, false when it rejected or took longer. */
export async function resolvesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => false,
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
