import { ImageResponse } from "next/og";

// The site's Open Graph card, rendered at build time with next/og's bundled font (no downloads).
export const alt = "GPUForge — the control plane for GPU clouds";
export const size = { width: 1200, height: 630 };
export const contentType = "image/png";

export default function OpenGraphImage() {
  return new ImageResponse(
    <div
      style={{
        width: "100%",
        height: "100%",
        display: "flex",
        flexDirection: "column",
        justifyContent: "space-between",
        background: "#0f172a",
        padding: 72,
        color: "white",
      }}
    >
      <div style={{ display: "flex", alignItems: "center", gap: 20, fontSize: 40 }}>
        <div style={{ width: 56, height: 56, borderRadius: 14, background: "#6366f1" }} />
        GPUForge
      </div>
      <div style={{ display: "flex", flexDirection: "column", gap: 24 }}>
        <div style={{ fontSize: 64, lineHeight: 1.1 }}>The control plane for GPU clouds</div>
        <div style={{ fontSize: 30, color: "#cbd5e1" }}>Fleet registry · fair scheduling · per-second billing · self-healing</div>
      </div>
    </div>,
    size,
  );
}
