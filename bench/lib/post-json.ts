import http from "node:http";

// The load generator's HTTP client: node:http over kept-alive connections. On two shared cores
// the generator competes with the server it measures; fetch (undici) spent about 900 µs of CPU
// per small request here, this about 250 µs — CPU left to the system under test.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export function postJson(url: string, key: string, body: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: "POST",
        agent,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
          } catch {
            resolve({ status: res.statusCode ?? 0, body: text });
          }
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
