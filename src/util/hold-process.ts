/**
 * Keeps the process alive while work is pending. The clocks' timers are unref'd
 * (a stray retry timer must not hold a finished process open), so whoever waits
 * on them holds this instead: one ref'd timer shared by every holder.
 */
let holders = 0;
let timer: NodeJS.Timeout | undefined;

/** Holds the process open until the returned release is called (once). */
export function holdProcess(): () => void {
  holders += 1;
  timer ??= setInterval(() => {}, 1 << 30);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    holders -= 1;
    if (holders === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}
