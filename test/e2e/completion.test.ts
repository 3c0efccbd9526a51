import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runInProcess } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

// The scripts are loaded in the real shells. bash is required; zsh and fish are
// tested where installed (Debian: apt-get install zsh fish) and reported as skipped otherwise.
const { dir } = tempDir("webhook-cli-completion-");
const installed = (shell: string) => spawnSync(shell, ["--version"], { stdio: "ignore" }).status === 0;
const scripts: Record<string, string> = {};

beforeAll(async () => {
  for (const shell of ["bash", "zsh", "fish"]) {
    const result = await runInProcess(["completion", shell]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    scripts[shell] = join(dir, `webhook-cli.${shell}`);
    writeFileSync(scripts[shell], result.stdout);
  }
});

const MESSAGE_TYPES = "page screen identify track alias group delete";

/** The candidates bash offers for a command line whose last word is being completed. */
function bashCandidates(words: string[]): string {
  const array = words.map((word) => `'${word}'`).join(" ");
  const script = `source "$1"; COMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _webhook_cli; echo "\${COMPREPLY[*]}"`;
  return execFileSync("bash", ["--norc", "-c", script, "bash", scripts["bash"] as string], { cwd: dir, encoding: "utf8" }).trim();
}

describe("webhook-cli completion bash, loaded in bash", () => {
  it("completes commands, subcommands and message types", () => {
    expect(bashCandidates(["webhook-cli", "re"])).toBe("replay");
    expect(bashCandidates(["webhook-cli", ""])).toBe("generate send listen inspect expect replay serve audience sign verify function demo completion");
    expect(bashCandidates(["webhook-cli", "generate", ""])).toBe(MESSAGE_TYPES);
    expect(bashCandidates(["webhook-cli", "generate", "track", "i"])).toBe("identify");
    expect(bashCandidates(["webhook-cli", "audience", ""])).toBe("sync");
    expect(bashCandidates(["webhook-cli", "completion", ""])).toBe("bash zsh fish");
  });

  it("completes flags (short ones too) and their fixed values", () => {
    expect(bashCandidates(["webhook-cli", "audience", "sync", "--con"]).split(" ")).toEqual(["--config", "--concurrency"]);
    expect(bashCandidates(["webhook-cli", "listen", "-"]).split(" ")).toEqual(expect.arrayContaining(["-p", "--port", "-s", "--secret", "--help"]));
    expect(bashCandidates(["webhook-cli", "send", "--type", ""])).toBe(MESSAGE_TYPES);
    expect(bashCandidates(["webhook-cli", "replay", "x.ndjson", "--type", "tr"])).toBe("track");
    expect(bashCandidates(["webhook-cli", "generate", "--alias-keys", ""])).toBe("spec camel");
    expect(bashCandidates(["webhook-cli", "verify", "--scheme", ""])).toBe("default standard svix github stripe shopify slack twilio");
    expect(bashCandidates(["webhook-cli", "sign", "--scheme", "st"])).toBe("standard stripe");
    expect(bashCandidates(["webhook-cli", "-"]).split(" ")).toEqual(["-V", "--version", "--no-color", "-h", "--help"]);
  });

  it("completes file names where a file is expected", () => {
    writeFileSync(join(dir, "recording.ndjson"), "");
    expect(bashCandidates(["webhook-cli", "replay", "recor"])).toBe("recording.ndjson");
    expect(bashCandidates(["webhook-cli", "generate", "-o", "recor"])).toBe("recording.ndjson");
  });
});

describe.skipIf(!installed("zsh"))("webhook-cli completion zsh (zsh installed)", () => {
  it("parses (zsh -n) and registers itself with compdef after compinit", () => {
    expect(spawnSync("zsh", ["-n", scripts["zsh"] as string]).status).toBe(0);
    const registered = execFileSync(
      "zsh",
      ["-f", "-c", 'autoload -U compinit && compinit -u -D && source "$1" && echo "${_comps[webhook-cli]}"', "zsh", scripts["zsh"] as string],
      {
        encoding: "utf8",
      },
    );
    expect(registered.trim()).toBe("_webhook_cli");
  });

  it("offers the same words as bash (zsh's compadd, stubbed here, filters them by the typed prefix)", () => {
    const offered = (words: string[]) =>
      execFileSync(
        "zsh",
        [
          "-f",
          "-c",
          `compdef() { :; }; compadd() { [[ $1 == -- ]] && shift; print -r -- "$*"; }; _files() { print FILES; }; source "$1"; words=(${words.map((w) => `'${w}'`).join(" ")}); CURRENT=${words.length}; _webhook_cli`,
          "zsh",
          scripts["zsh"] as string,
        ],
        { encoding: "utf8" },
      ).trim();
    expect(offered(["webhook-cli", "re"])).toBe("generate send listen inspect expect replay serve audience sign verify function demo completion");
    expect(offered(["webhook-cli", "generate", ""])).toBe(MESSAGE_TYPES);
    expect(offered(["webhook-cli", "audience", ""])).toBe("sync");
    expect(offered(["webhook-cli", "send", "--alias-keys", ""])).toBe("spec camel");
    expect(offered(["webhook-cli", "replay", ""])).toBe("FILES");
  });

  it("installed as _webhook-cli in $fpath (the README's zsh line), compinit finds it", () => {
    const fpath = join(dir, "zfunc");
    mkdirSync(fpath, { recursive: true });
    copyFileSync(scripts["zsh"] as string, join(fpath, "_webhook-cli"));
    const found = execFileSync(
      "zsh",
      ["-f", "-c", 'fpath=("$1" $fpath); autoload -U compinit && compinit -u -D && echo "${_comps[webhook-cli]}"', "zsh", fpath],
      { encoding: "utf8" },
    );
    expect(found.trim()).toBe("_webhook-cli");
  });
});

describe.skipIf(!installed("fish"))("webhook-cli completion fish (fish installed)", () => {
  const complete = (line: string) =>
    execFileSync("fish", ["--no-config", "-c", `source $argv[1]; complete -C '${line}'`, scripts["fish"] as string], { encoding: "utf8" })
      .trim()
      .split("\n")
      .map((candidate) => candidate.split("\t")[0]);

  it("parses (fish -n) and offers the same candidates", () => {
    expect(spawnSync("fish", ["-n", scripts["fish"] as string]).status).toBe(0);
    expect(complete("webhook-cli re")).toEqual(["replay"]);
    expect(complete("webhook-cli generate ").sort()).toEqual(MESSAGE_TYPES.split(" ").sort());
    expect(complete("webhook-cli audience ")).toEqual(["sync"]);
    expect(complete("webhook-cli send --alias-keys ").sort()).toEqual(["camel", "spec"]);
  });
});
