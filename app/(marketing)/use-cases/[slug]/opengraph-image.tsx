import { ImageResponse } from "next/og";
import { USE_CASES, useCase } from "@/content/use-cases";

// One Open Graph card per use case, rendered at build time.
export const size = { width: 1200, height: 630 };
export const contentType = "image/png";
export const alt = "GPUForge use case";

export function generateStaticParams() {
  return USE_CASES.map((u) => ({ slug: u.slug }));
}

export default async function UseCaseImage({ params }: { params: Promise<{ slug: string }> }) {
  const u = useCase((await params).slug);
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
      <div style={{ display: "flex", alignItems: "center", gap: 20, fontSize: 34, color: "#a5b4fc" }}>
        <div style={{ width: 48, height: 48, borderRadius: 12, background: "#6366f1" }} />
        GPUForge · {u?.title ?? "Use case"}
      </div>
      <div style={{ fontSize: 58, lineHeight: 1.15 }}>{u?.headline ?? "The control plane for GPU clouds"}</div>
      <div style={{ display: "flex", gap: 48, fontSize: 26, color: "#cbd5e1" }}>
        {(u?.proof ?? []).slice(0, 2).map((p) => (
          <div key={p.label} style={{ display: "flex", flexDirection: "column" }}>
            <span style={{ fontSize: 44, color: "white" }}>{p.figure}</span>
            <span style={{ maxWidth: 480 }}>{p.label}</span>
          </div>
        ))}
      </div>
    </div>,
    size,
  );
}
