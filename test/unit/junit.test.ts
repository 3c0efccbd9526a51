import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { flagOfField } from "../../src/cli/shell/field-flags.js";
import { UsageError, type WebhookCliError } from "../../src/errors.js";
import { junitXml, writeJunitFile } from "../../src/report/junit.js";
import { thrownBy } from "../helpers/errors.js";

describe("junitXml", () => {
  it("writes one suite with counts and one testcase per case", () => {
    const xml = junitXml({
      name: "webhook-cli listen",
      timestamp: new Date("2024-01-01T00:00:00.123Z"),
      cases: [
        { name: "#1 track POST /hook", classname: "webhook-cli.listen", time: 0.0123 },
        {
          name: "#2 page POST /hook",
          classname: "webhook-cli.listen",
          time: 0.5,
          failure: { message: "signature: missing", type: "signature", details: "a\nb" },
        },
      ],
    });
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="webhook-cli listen" tests="2" failures="1"')).toBe(true);
    expect(xml).toContain('<testsuite name="webhook-cli listen" tests="2" failures="1" errors="0" skipped="0" time="0.512" timestamp="2024-01-01T00:00:00">');
    expect(xml).toContain('<testcase name="#1 track POST /hook" classname="webhook-cli.listen" time="0.012"/>');
    expect(xml).toContain('<failure message="signature: missing" type="signature">a\nb</failure>');
    expect(xml.trim().endsWith("</testsuites>")).toBe(true);
  });

  it("escapes markup and drops characters XML cannot hold", () => {
    const xml = junitXml({
      name: 'a "b" <c>',
      cases: [{ name: "x & y\u0001", classname: "k", time: 0, failure: { message: 'line1\n"q"', details: "<oops> & \u0000" } }],
    });
    expect(xml).toContain('name="a &quot;b&quot; &lt;c&gt;"');
    expect(xml).toContain('name="x &amp; y\ufffd"');
    expect(xml).toContain('message="line1&#10;&quot;q&quot;"');
    expect(xml).toContain(">&lt;oops&gt; &amp; \ufffd</failure>");
    expect(xml).not.toMatch(/[\u0000\u0001]/);
  });

  it("writes an empty suite", () => {
    expect(junitXml({ name: "empty", cases: [] })).toContain('tests="0" failures="0" errors="0" skipped="0" time="0.000"');
  });
});

describe("writeJunitFile", () => {
  it("a file that cannot be written is a usage error naming the junit field and the file; the CLI shows --junit", () => {
    const file = join("no-such-dir", "report.xml");
    const error = thrownBy(() => writeJunitFile(tmpdir(), file, { name: "webhook-cli send", cases: [] })) as WebhookCliError;
    expect(error).toBeInstanceOf(UsageError);
    expect(error.source).toEqual({ field: "junit", file });
    expect(error.describe(flagOfField)).toMatch(new RegExp(`^${file.replace(/[.\\/]/g, "\\$&")}: --junit: cannot write: ENOENT`));
  });
});
