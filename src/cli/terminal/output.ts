import { Chalk, type ChalkInstance } from "chalk";
import type { Ora } from "ora";
import type { CliIo } from "./io.js";
import { jsonTerminalSafe, terminalSafe } from "../../safe-text/printable.js";
import { redactText, type Secrets } from "../../safe-text/redact.js";

/**
 * Terminal rules (docs/cli.md#terminals): colour and spinners only on a TTY, never
 * with NO_COLOR (or --no-color, which sets it); FORCE_COLOR forces colour
 * (not spinners) off a TTY, as Node and chalk read it.
 */
export interface Output {
  readonly color: ChalkInstance;
  readonly json: boolean;
  /** Human result lines (stdout). Suppressed under --json. */
  line(text: string): void;
  /** Human result lines that already end in a newline each, written in one go (listen's request lines). Suppressed under --json. */
  lines(text: string): void;
  /** One JSON object per line on stdout (only under --json). */
  event(event: string, fields: Record<string, unknown>): void;
  /** Logs and warnings (stderr), kept under --json. */
  log(text: string): void;
  warn(text: string): void;
  /** Spinners are drawn: stdout and stderr are both terminals (and not CI, not NO_COLOR). */
  readonly spins: boolean;
  /** A spinner on stderr when `spins`; a no-op otherwise. */
  spinner(text: string): Spinner;
  /** From now on, text equal to any of the secrets is masked too (known once the settings are read). */
  maskSecret(secrets: Secrets): void;
}

export interface Spinner {
  update(text: string): void;
  stop(): void;
}

const NO_SPINNER: Spinner = { update() {}, stop() {} };

// A style code; an opening one directly followed by its reset is an empty span, which is
// what chalk leaves after a trailing newline (`red("x\n")` ends `\n` + open + reset).
const STYLE_CODE = /\x1b\[(\d{1,3})m/g;
const OPENING = /^(?:[1-9]|[34][0-7]|9[0-7]|10[0-7])$/;
const RESET = /^(?:2[2-9]|39|49|0)$/;

/** Drops empty coloured spans, so no reset code lands after a newline (a pager or log shows it as junk). */
export function resetsBeforeNewlines(text: string): string {
  // No escape code, no span (the usual case: colour off).
  if (!text.includes("\x1b")) return text;
  // One pass with a stack: a reset cancels the opening code just before it, and then the one
  // before that (nested empty spans), in time linear in the text whatever a sender put in it.
  const pieces: string[] = [];
  const opening: boolean[] = [];
  let copied = 0;
  for (const match of text.matchAll(STYLE_CODE)) {
    if (match.index > copied) {
      pieces.push(text.slice(copied, match.index));
      opening.push(false);
    }
    copied = match.index + match[0].length;
    const code = match[1] as string;
    if (opening[opening.length - 1] === true && RESET.test(code)) {
      pieces.pop();
      opening.pop();
      continue;
    }
    pieces.push(match[0]);
    opening.push(OPENING.test(code));
  }
  if (copied < text.length) pieces.push(text.slice(copied));
  return pieces.join("");
}

/** 0 or 1: FORCE_COLOR (not "0"/"false") wins, then NO_COLOR, then whether the stream is a terminal. */
export function colorLevel(env: NodeJS.ProcessEnv, isTTY: boolean): 0 | 1 {
  const force = env["FORCE_COLOR"];
  if (force !== undefined && force !== "0" && force !== "false") return 1;
  if (force === "0" || force === "false") return 0;
  if (env["NO_COLOR"] !== undefined && env["NO_COLOR"] !== "") return 0;
  return isTTY ? 1 : 0;
}

/** Every line printed goes through the one redaction (credential-like query values and URL passwords masked) and shows control characters escaped. */
export function createOutput(io: CliIo, options: { json?: boolean } = {}): Output {
  const noColor = io.env["NO_COLOR"] !== undefined && io.env["NO_COLOR"] !== "";
  const stdoutColor = new Chalk({ level: colorLevel(io.env, io.stdoutIsTTY) });
  const stderrColor = new Chalk({ level: colorLevel(io.env, io.stderrIsTTY) });
  const json = options.json ?? false;
  let active: Ora | undefined;
  let secret: Secrets;
  // A spinner needs a terminal with a width; without one ora redraws forever. stdout must be
  // a terminal too: `listen --json | cat` on a terminal would get the spinner in its output.
  const columns = (io.stderr as NodeJS.WriteStream).columns ?? 0;
  const spins = io.stdoutIsTTY && io.stderrIsTTY && !noColor && !io.env["CI"] && columns > 0;
  // ora is only loaded where it can spin: it is a noticeable part of start-up.
  const oraModule = spins ? import("ora") : undefined;

  // Writing while a spinner spins would tear its line: clear it first.
  const withSpinnerCleared = (write: () => void): void => {
    if (active?.isSpinning) {
      active.clear();
      write();
      active.render();
    } else write();
  };

  return {
    color: stdoutColor,
    json,
    spins,
    line(text) {
      if (!json) withSpinnerCleared(() => io.stdout.write(`${terminalSafe(resetsBeforeNewlines(redactText(text, secret)))}\n`));
    },
    lines(text) {
      // Written as given: no newline joined on, which would copy a block of a few hundred lines once more.
      if (!json) withSpinnerCleared(() => io.stdout.write(terminalSafe(resetsBeforeNewlines(redactText(text, secret)))));
    },
    event(event, fields) {
      if (json) io.stdout.write(`${jsonTerminalSafe(redactText(JSON.stringify({ event, ...fields }), secret))}\n`);
    },
    log(text) {
      withSpinnerCleared(() => io.stderr.write(`${terminalSafe(resetsBeforeNewlines(redactText(text, secret)))}\n`));
    },
    warn(text) {
      withSpinnerCleared(() => io.stderr.write(`${stderrColor.yellow("warning:")} ${terminalSafe(resetsBeforeNewlines(redactText(text, secret)))}\n`));
    },
    maskSecret(value) {
      secret = value;
    },
    spinner(text) {
      if (!oraModule) return NO_SPINNER;
      return oraSpinner(oraModule, io.stderr as NodeJS.WriteStream, text, {
        redact: (value) => redactText(value, secret),
        started: (spinner) => (active = spinner),
        stopped: (spinner) => {
          if (active === spinner) active = undefined;
        },
      });
    },
  };
}

/** An ora spinner that starts once ora has loaded (unless stopped first); `started`/`stopped` track the one on screen. */
function oraSpinner(
  oraModule: Promise<typeof import("ora")>,
  stream: NodeJS.WriteStream,
  text: string,
  hooks: { redact: (text: string) => string; started: (spinner: Ora) => void; stopped: (spinner: Ora | undefined) => void },
): Spinner {
  let current = hooks.redact(text);
  let stopped = false;
  let spinner: Ora | undefined;
  void oraModule.then(({ default: ora }) => {
    if (stopped) return;
    spinner = ora({ text: current, stream, discardStdin: false }).start();
    hooks.started(spinner);
  });
  return {
    update(next) {
      current = hooks.redact(next);
      if (spinner) spinner.text = current;
    },
    stop() {
      stopped = true;
      spinner?.stop();
      hooks.stopped(spinner);
    },
  };
}
