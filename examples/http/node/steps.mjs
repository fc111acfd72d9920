// The steps of the "node_invoice" workflow, as an HTTP endpoint: the Python
// example's (../python/steps.py) in Node 18+, without npm packages.
//
//   GENEVA_HTTP_SECRET=... node examples/http/node/steps.mjs [PORT]
//
// PORT is the argument, else $PORT, else 8001 (0: any free port). ENDPOINT_URL
// is the URL the definition names the endpoint by, before /steps/ (the
// signature covers the URL): http://127.0.0.1:PORT unless set.

import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const secret = process.env.GENEVA_HTTP_SECRET ?? "";

// Whether header is a Geneva-Signature of the request (its method, this
// endpoint's own URL for it, its raw body): t=<unix seconds>,v1=<hex>[,v1=<hex>].
function verify(header = "", method, url, body, secret, tolerance = 300) {
  const fields = header.split(",").map((part) => part.split("="));
  const t = fields.find(([name]) => name === "t")?.[1] ?? "";
  if (!/^\d+$/.test(t) || Math.abs(Date.now() / 1000 - Number(t)) > tolerance) {
    return false;
  }
  const mac = createHmac("sha256", secret).update(`${t}\n${method}\n${url}\n`).update(body);
  const expected = Buffer.from(mac.digest("hex"));
  return fields.some(([name, v1 = ""]) => {
    const given = Buffer.from(v1);
    return name === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

// Each step takes the request's JSON and returns [status, reply, headers]:
// reply undefined (an empty 2xx is success: the next step runs), an object
// (JSON: a signal) or a string (an error's message).
const steps = new Map(Object.entries({
  collect_lines(request) {
    // A resumable step: one page per request, the page number its cursor.
    const page = request.cursor?.page ?? 1;
    // ... fetch page `page` of invoice request.hero_id's lines, store them ...
    if (page < 3) return [200, { signal: "suspend", cursor: { page: page + 1 } }];
    return [204];
  },
  charge(request) {
    // A real charge would give the payment provider an idempotency key that
    // holds across reattempts, such as `invoice-${request.workflow_id}`.
    if (request.attempt === 1) {
      // Rate limited: error class http.status.429, which the definition's
      // policy reattempts, here after at least a second.
      return [429, "payment provider busy", { "Retry-After": "1" }];
    }
    return [200];
  },
  send_receipt() {
    return [200];
  },
}));

function reply(res, status, content, headers = {}) {
  const json = typeof content === "object";
  res.writeHead(status, { "Content-Type": json ? "application/json" : "text/plain; charset=utf-8", ...headers });
  res.end(json ? JSON.stringify(content) : content);
}

// The URL the definition names this endpoint by, before /steps/ (set once
// listening).
let endpointUrl;

const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  const executionId = req.headers["geneva-execution-id"];
  // the URL the worker was given, from this endpoint's own, not from the
  // Host header (which a replayed request sets as it likes)
  const url = endpointUrl + req.url;
  if (secret && !verify(req.headers["geneva-signature"], req.method, url, body, secret)) {
    console.log(`${req.url} execution ${executionId}: bad signature`);
    return reply(res, 401, "bad signature");
  }
  const step = req.method === "POST" && steps.get(req.url.replace(/^\/steps\//, ""));
  if (!step) {
    console.log(`${req.method} ${req.url} execution ${executionId}: no such step`);
    return reply(res, 404, "no such step");
  }
  let result;
  try {
    const request = JSON.parse(body);
    console.log(`${request.step} execution ${executionId} attempt ${request.attempt}`);
    result = step(request);
  } catch (error) {
    result = [500, String(error)]; // an error of class http.status.500, with this message
  }
  reply(res, ...result);
});

server.listen(Number(process.argv[2] ?? process.env.PORT ?? 8001), "127.0.0.1", () => {
  endpointUrl = (process.env.ENDPOINT_URL ?? `http://127.0.0.1:${server.address().port}`).replace(/\/$/, "");
  if (!secret) console.log("GENEVA_HTTP_SECRET is not set: signatures are not checked");
  console.log(`node_invoice steps on http://127.0.0.1:${server.address().port}/steps/`);
});
