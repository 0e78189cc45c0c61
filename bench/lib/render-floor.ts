// Renders the fleet floor to HTML from racks JSON on stdin and prints {"render_ms", "bytes"}.
// A separate process: the benchmark runs with the react-server condition, whose react-dom has no
// renderToString.
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { FleetFloor } from "../../components/fleet/fleet-floor";

let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  const racks = JSON.parse(input);
  renderToString(createElement(FleetFloor, { racks })); // warm-up
  const t0 = performance.now();
  const html = renderToString(createElement(FleetFloor, { racks }));
  process.stdout.write(JSON.stringify({ render_ms: performance.now() - t0, bytes: html.length }));
});
