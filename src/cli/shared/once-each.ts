/**
 * A handler that says each distinct error once in a row: a full disk fails every request or
 * write until space returns, and one line per failure would bury everything else.
 */
export function onceEach(say: (message: string) => void): (error: Error) => void {
  let lastError = "";
  return (error) => {
    if (error.message === lastError) return;
    lastError = error.message;
    say(error.message);
  };
}
