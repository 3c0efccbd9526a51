import { appendFileSync } from "node:fs";

// The hooks thread of module.register has the process's environment too.
const out = process.env.RECORD_RESOLVED_TO;

export function resolve(specifier, context, next) {
  const result = next(specifier, context);
  return result instanceof Promise ? result.then(record) : record(result);
}

function record(result) {
  appendFileSync(out, `${result.url}\n`);
  return result;
}
