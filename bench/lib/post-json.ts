import http from "node:http";

// The load generator's HTTP client: node:http over kept-alive connections. On two shared cores
// the generator competes with the server it measures; fetch (undici) spent about 900 µs of CPU
// per small request here, this about 250 µs — CPU left to the system under test.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

type Reply = { status: number; body: unknown };

function request(method: string, url: string, key: string, text: string | undefined): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          ...(text === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(text) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const raw = Buffer.concat(chunks).toString("utf8");
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(raw) });
          } catch {
            resolve({ status: res.statusCode ?? 0, body: raw });
          }
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}

/** POSTs a JSON body already serialised. */
export const postJson = (url: string, key: string, body: string): Promise<Reply> => request("POST", url, key, body);
